// A Parquet file streamed to S3: hyparquet-writer encodes row groups into a byte buffer, and every full
// part of that buffer goes up as a multipart part, so memory holds at most one row group plus one part.
import { constants, gzipSync, zstdCompressSync } from 'node:zlib';
import type { S3Client } from '@aws-sdk/client-s3';
import type { CompressionCodec } from 'hyparquet';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type { Compression } from '../schemas.ts';
import type { ColumnPlan } from './columns.ts';
import { MultipartUpload } from './multipart-upload.ts';

const CODECS: Record<Compression, CompressionCodec> = { zstd: 'ZSTD', snappy: 'SNAPPY', gzip: 'GZIP', none: 'UNCOMPRESSED' };

type Compressors = Partial<Record<CompressionCodec, (input: Uint8Array) => Uint8Array>>;

export const COMPRESSORS: Compressors = {
  ZSTD: (input) => zstdCompressSync(input, { params: { [constants.ZSTD_c_compressionLevel]: 3 } }),
  GZIP: (input) => gzipSync(input, { level: 6 }),
};

export function parquetCodec(compression: Compression): CompressionCodec {
  return CODECS[compression];
}

/** Hands complete parts of the encoded bytes to `sink`; keeps the remainder until more arrives or the file ends. */
export class PartWriter extends ByteWriter {
  readonly #partSize: number;
  readonly #sink: (part: Uint8Array) => Promise<void>;

  constructor(partSize: number, sink: (part: Uint8Array) => Promise<void>) {
    super(Math.min(partSize, 1 << 20));
    this.#partSize = partSize;
    this.#sink = sink;
  }

  async flush(): Promise<void> {
    await this.#drain(false);
  }

  override async finish(): Promise<void> {
    await this.#drain(true);
  }

  async #drain(all: boolean): Promise<void> {
    let start = 0;
    while (this.index - start >= this.#partSize || (all && this.index > start)) {
      const end = Math.min(start + this.#partSize, this.index);
      // Copy: the buffer is reused for the next row group while the part may still be in flight.
      await this.#sink(new Uint8Array(this.buffer.slice(start, end)));
      start = end;
    }
    if (start > 0) {
      new Uint8Array(this.buffer).copyWithin(0, start, this.index);
      this.index -= start;
    }
  }
}

export interface ParquetFileOptions {
  client: S3Client;
  bucket: string;
  key: string;
  plan: ColumnPlan;
  compression: Compression;
  partSizeBytes: number;
  signal?: AbortSignal;
  /** Called with the upload id before any part is sent. */
  onUploadStarted(uploadId: string): Promise<void>;
}

export class ParquetFile {
  readonly key: string;
  rows = 0;
  readonly #upload: MultipartUpload;
  readonly #writer: ParquetWriter;
  readonly #bytes: PartWriter;
  readonly #plan: ColumnPlan;
  #uploading: Promise<void> = Promise.resolve();

  private constructor(upload: MultipartUpload, options: ParquetFileOptions) {
    this.key = options.key;
    this.#upload = upload;
    this.#plan = options.plan;
    // One part uploads while the next row groups encode; the writer waits only when a second part is ready.
    this.#bytes = new PartWriter(options.partSizeBytes, async (part) => {
      await this.#uploading;
      this.#uploading = upload.uploadPart(part);
      this.#uploading.catch(() => undefined);
    });
    this.#writer = new ParquetWriter({
      writer: this.#bytes,
      schema: options.plan.schema,
      codec: parquetCodec(options.compression),
      compressors: COMPRESSORS,
      createdBy: 'berth bulk export',
    });
  }

  static async open(options: ParquetFileOptions): Promise<ParquetFile> {
    const upload = await MultipartUpload.start(options.client, options.bucket, options.key, options.signal);
    try {
      await options.onUploadStarted(upload.uploadId);
    } catch (error) {
      await upload.abort();
      throw error;
    }
    return new ParquetFile(upload, options);
  }

  get uploadId(): string {
    return this.#upload.uploadId;
  }

  get bytesUploaded(): number {
    return this.#upload.bytesUploaded;
  }

  /** Encodes the rows as one row group and uploads whatever full parts that produces. */
  async writeRowGroup(rows: readonly Record<string, unknown>[]): Promise<void> {
    if (rows.length === 0) return;
    await this.#writer.write({ columnData: this.#plan.toColumns(rows), rowGroupSize: rows.length });
    this.rows += rows.length;
  }

  /** Writes the footer, uploads the last part and completes the upload: the object appears whole or not at all. */
  async close(): Promise<void> {
    await this.#writer.finish();
    await this.#uploading;
    await this.#upload.complete();
  }

  async abort(): Promise<void> {
    await this.#uploading.catch(() => undefined);
    await this.#upload.abort();
  }
}
