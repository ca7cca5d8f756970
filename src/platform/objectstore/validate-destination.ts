// Destination validation at creation: prove that this endpoint is S3, that the credentials are good and that
// objects can be written, by writing a small file under <root>/tmp/, reading it back and deleting it.
import { randomUUID } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { classifyS3Error, destinationErrorDetail } from './errors.ts';
import type { S3ErrorKind } from './errors.ts';
import { destinationKey } from './keys.ts';
import type { DestinationLocation } from './keys.ts';

export type DestinationValidation =
  | {
      ok: true;
      /** Key of the test file (it stays in the bucket when `deleted` is false). */
      key: string;
      /** False when the key may not delete objects (optional permission): the test file remains. */
      deleted: boolean;
      /** False when the key may not read objects (optional permission), so the bytes were not compared. */
      readBack: boolean;
    }
  | {
      ok: false;
      kind: S3ErrorKind;
      /** The spec's words for the error kind: the `detail` of the 400 answer. */
      detail: string;
      /** What the store said, for logs. */
      message: string;
      step: 'write' | 'read' | 'compare';
    };

export async function validateDestination(
  client: S3Client,
  location: DestinationLocation,
): Promise<DestinationValidation> {
  const id = randomUUID();
  const key = destinationKey(location, 'tmp', `${id}.txt`);
  const written = Buffer.from(`Berth export destination check ${id} at ${new Date().toISOString()}\n`, 'utf8');

  try {
    await client.send(
      new PutObjectCommand({ Bucket: location.bucket, Key: key, Body: written, ContentType: 'text/plain' }),
    );
  } catch (err) {
    return failure('write', err);
  }

  const read = await readBack(client, location.bucket, key, written);
  if (!read.ok) return read;

  let deleted = true;
  try {
    await client.send(new DeleteObjectCommand({ Bucket: location.bucket, Key: key }));
  } catch {
    // Delete permission is optional (spec: the test file then remains); nothing else to learn from a failure here.
    deleted = false;
  }
  return { ok: true, key, deleted, readBack: read.compared };
}

type ReadBackResult = { ok: true; compared: boolean } | Extract<DestinationValidation, { ok: false }>;

// Anything that answers 200 to a PUT passes the write, so the bytes read back are what proves an S3 store.
async function readBack(client: S3Client, bucket: string, key: string, written: Buffer): Promise<ReadBackResult> {
  let got: Uint8Array;
  try {
    const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    got = answer.Body ? await answer.Body.transformToByteArray() : new Uint8Array();
  } catch (err) {
    const code = (err as { name?: unknown }).name;
    // Read permission is optional; an S3 AccessDenied (parsed from S3's XML) still shows an S3 store is there.
    if (code === 'AccessDenied') return { ok: true, compared: false };
    // The object was just written: a store that cannot find it is not behaving like S3.
    if (code === 'NoSuchKey') {
      return invalidEndpoint('read', `the test object ${key} was written but reading it back found nothing`);
    }
    return failure('read', err);
  }
  if (!Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(written)) {
    return invalidEndpoint('compare', `reading the test object back gave ${got.byteLength} bytes that differ from the ${written.length} written`);
  }
  return { ok: true, compared: true };
}

function failure(step: 'write' | 'read', err: unknown): Extract<DestinationValidation, { ok: false }> {
  const { kind, message } = classifyS3Error(err);
  const words = destinationErrorDetail(kind);
  // The four spec kinds answer with exactly the spec's words; other failures also say what happened.
  const detail = kind === 'transient' || kind === 'unknown' ? `${words}: ${message}` : words;
  return { ok: false, kind, detail, message, step };
}

function invalidEndpoint(step: 'read' | 'compare', message: string): Extract<DestinationValidation, { ok: false }> {
  return { ok: false, kind: 'invalid_endpoint', detail: destinationErrorDetail('invalid_endpoint'), message, step };
}
