// One object written through S3 multipart upload, part by part, so a file of any size never sits in memory.
// The upload id is known before the first part: the caller records it so that a run resumed elsewhere can
// abort an upload its dead predecessor left open.
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, UploadPartCommand,
  type CompletedPart, type S3Client,
} from '@aws-sdk/client-s3';

export class MultipartUpload {
  readonly bucket: string;
  readonly key: string;
  readonly uploadId: string;
  readonly #client: S3Client;
  readonly #signal: AbortSignal | undefined;
  readonly #parts: CompletedPart[] = [];
  bytesUploaded = 0;

  private constructor(client: S3Client, bucket: string, key: string, uploadId: string, signal: AbortSignal | undefined) {
    this.#client = client;
    this.bucket = bucket;
    this.key = key;
    this.uploadId = uploadId;
    this.#signal = signal;
  }

  static async start(client: S3Client, bucket: string, key: string, signal?: AbortSignal): Promise<MultipartUpload> {
    const created = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: 'application/vnd.apache.parquet' }), { abortSignal: signal });
    if (!created.UploadId) throw new Error(`The store answered CreateMultipartUpload for ${key} without an upload id`);
    return new MultipartUpload(client, bucket, key, created.UploadId, signal);
  }

  async uploadPart(body: Uint8Array): Promise<void> {
    const partNumber = this.#parts.length + 1;
    const answer = await this.#client.send(new UploadPartCommand({
      Bucket: this.bucket, Key: this.key, UploadId: this.uploadId, PartNumber: partNumber, Body: body, ContentLength: body.byteLength,
    }), { abortSignal: this.#signal });
    this.#parts.push({ PartNumber: partNumber, ETag: answer.ETag });
    this.bytesUploaded += body.byteLength;
  }

  async complete(): Promise<void> {
    await this.#client.send(new CompleteMultipartUploadCommand({
      Bucket: this.bucket, Key: this.key, UploadId: this.uploadId, MultipartUpload: { Parts: this.#parts },
    }), { abortSignal: this.#signal });
  }

  async abort(): Promise<void> {
    await abortUpload(this.#client, this.bucket, this.key, this.uploadId);
  }
}

/**
 * Aborts an upload, best effort: missing permission (optional per the spec) or an upload that is already gone
 * leave nothing to do, and a store that never sees the abort expires the parts by its own lifecycle rules.
 */
export async function abortUpload(client: S3Client, bucket: string, key: string, uploadId: string): Promise<boolean> {
  try {
    await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }));
    return true;
  } catch {
    return false;
  }
}
