// Reads a request body stream whole, undoing Content-Encoding (the SDK gzips multipart bodies when /info
// says so), and stops with 413 as soon as either the wire bytes or the decoded bytes pass the limit.
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { AppError, badRequest } from '../../../platform/errors.ts';

export function payloadTooLarge(limit: number): AppError {
  return new AppError('payload_too_large', `Request body is larger than the limit of ${limit} bytes; send smaller batches.`);
}

function decoder(encoding: string): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | zlib.ZstdDecompress | undefined {
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    case 'zstd':
      return zlib.createZstdDecompress();
    default:
      return undefined;
  }
}

export async function readBody(stream: Readable, contentEncoding: string | undefined, limit: number): Promise<Buffer> {
  const encoding = (contentEncoding ?? 'identity').trim().toLowerCase();
  const declared = Number((stream as Readable & { headers?: Record<string, string> }).headers?.['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    stream.resume();
    throw payloadTooLarge(limit);
  }
  if (encoding === 'identity' || encoding === '') return collect(stream, limit);
  const decode = decoder(encoding);
  if (!decode) {
    stream.resume();
    throw new AppError('bad_request', `Unsupported Content-Encoding "${encoding}": use gzip, deflate, br, zstd or none.`);
  }
  let wire = 0;
  stream.on('data', (chunk: Buffer) => {
    wire += chunk.length;
    if (wire > limit) decode.destroy(payloadTooLarge(limit));
  });
  stream.on('error', (error) => decode.destroy(error));
  stream.pipe(decode);
  try {
    return await collect(decode, limit);
  } catch (error) {
    // Drain the rest so that the 4xx answer reaches the client instead of a reset connection.
    stream.unpipe(decode);
    stream.resume();
    if (error instanceof AppError) throw error;
    throw badRequest(`Request body could not be decoded as ${encoding}: ${(error as Error).message}`);
  }
}

/** Collects a stream; past the limit it keeps draining (a destroyed request would lose the 413 answer). */
function collect(stream: Readable, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    stream.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) {
        settled = true;
        reject(payloadTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    stream.once('end', () => {
      if (settled) return;
      settled = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    stream.once('error', (error) => {
      if (settled) return;
      settled = true;
      reject(error);
    });
  });
}
