// Large values that the agent server rewrites on every run (checkpoints, pending writes, a thread's
// values) are compressed here rather than by the database: zstd is fast and ~10× on serialized messages,
// so a tenth of the bytes cross to the database, into its WAL and, on PGlite, through WASM. Stored as
// base64 text (text is much cheaper than bytea on the embedded engine) in columns the database does not
// try to compress again (STORAGE EXTERNAL).
import zlib from 'node:zlib';

/** Values from this size on are stored packed (below it compression saves little). */
export const PACK_FROM_BYTES = 2048;
const ZSTD_LEVEL = { params: { [zlib.constants.ZSTD_c_compressionLevel]: 1 } };

export function pack(data: Uint8Array | string): string {
  return zlib.zstdCompressSync(data, ZSTD_LEVEL).toString('base64');
}

export function unpack(text: string): Buffer {
  return zlib.zstdDecompressSync(Buffer.from(text, 'base64'));
}
