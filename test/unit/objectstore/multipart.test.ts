// Multipart uploads through the signature-checking proxy, as the export worker will send Parquet files.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { startTestS3 } from '../../helpers/s3/index.ts';
import type { RecordedRequest, TestS3 } from '../../helpers/s3/index.ts';
import { classifyS3Error } from '../../../src/platform/objectstore/index.ts';
import { ALL_KEYS, clientFor, KEYS, thrownBy } from './fixtures.ts';

const BUCKET = 'parquet';
const MiB = 1024 * 1024;
const PART_SIZE = 5 * MiB; // the S3 minimum for every part but the last

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');
const isPart = (r: RecordedRequest) => r.method === 'PUT' && 'partNumber' in r.query;
const isAbort = (r: RecordedRequest) => r.method === 'DELETE' && 'uploadId' in r.query;

describe('multipart uploads', () => {
  let s3: TestS3;
  const requestsFor = (key: string) => s3.requests.filter((r) => r.key === key);

  before(async () => {
    s3 = await startTestS3({ keys: ALL_KEYS, buckets: [BUCKET] });
  });
  after(async () => {
    await s3.stop();
  });

  test('lib-storage Upload of 11 MiB sends three parts and the stored bytes match', async () => {
    const body = randomBytes(11 * MiB);
    const upload = new Upload({
      client: clientFor(s3.endpoint, KEYS.full),
      params: { Bucket: BUCKET, Key: 'big/file.parquet', Body: body },
      partSize: PART_SIZE,
      queueSize: 2,
    });
    await upload.done();

    const seen = requestsFor('big/file.parquet');
    assert.equal(seen.filter((r) => r.method === 'POST' && 'uploads' in r.query).length, 1);
    assert.deepEqual(seen.filter(isPart).map((r) => [r.query.partNumber, r.status]).sort(), [
      ['1', 200],
      ['2', 200],
      ['3', 200],
    ]);
    assert.equal(seen.filter((r) => r.method === 'POST' && 'uploadId' in r.query && r.status === 200).length, 1);
    const stored = await s3.getObject(BUCKET, 'big/file.parquet');
    assert.equal(stored?.length, body.length);
    assert.equal(sha256(stored ?? new Uint8Array()), sha256(body));
  });

  test('a stream of unknown length is uploaded in parts', async () => {
    const chunks = Array.from({ length: 11 }, () => randomBytes(MiB));
    const upload = new Upload({
      client: clientFor(s3.endpoint, KEYS.full),
      params: { Bucket: BUCKET, Key: 'streamed.parquet', Body: Readable.from(chunks) },
      partSize: PART_SIZE,
    });
    await upload.done();
    assert.equal(requestsFor('streamed.parquet').filter(isPart).length, 3);
    const stored = await s3.getObject(BUCKET, 'streamed.parquet');
    assert.equal(sha256(stored ?? new Uint8Array()), sha256(Buffer.concat(chunks)));
  });

  test('AbortMultipartUpload discards the upload: its id is gone and no object appears', async () => {
    const client = clientFor(s3.endpoint, KEYS.full);
    const Key = 'aborted.parquet';
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key }));
    assert.ok(UploadId);
    await client.send(new UploadPartCommand({ Bucket: BUCKET, Key, UploadId, PartNumber: 1, Body: randomBytes(PART_SIZE) }));
    await client.send(new AbortMultipartUploadCommand({ Bucket: BUCKET, Key, UploadId }));

    assert.deepEqual(requestsFor(Key).filter(isAbort).map((r) => [r.permission, r.status]), [['abortMultipart', 204]]);
    const late = await thrownBy(
      client.send(new UploadPartCommand({ Bucket: BUCKET, Key, UploadId, PartNumber: 2, Body: 'x' })),
    );
    assert.equal((late as { name?: string }).name, 'NoSuchUpload');
    const complete = await thrownBy(
      client.send(new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key, UploadId, MultipartUpload: { Parts: [] } })),
    );
    assert.equal((complete as { name?: string }).name, 'NoSuchUpload');
    assert.deepEqual(await s3.listObjects(BUCKET, Key), []);
  });

  test('a key without abort permission is refused with AccessDenied', async () => {
    const Key = 'abort-denied.parquet';
    const limited = clientFor(s3.endpoint, KEYS.noAbort);
    const { UploadId } = await limited.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key }));
    const err = await thrownBy(limited.send(new AbortMultipartUploadCommand({ Bucket: BUCKET, Key, UploadId })));
    assert.equal((err as { name?: string }).name, 'AccessDenied');
    assert.equal(classifyS3Error(err).kind, 'access_denied');
    // Still open: a key that may abort can clean it up.
    await clientFor(s3.endpoint, KEYS.full).send(new AbortMultipartUploadCommand({ Bucket: BUCKET, Key, UploadId }));
    assert.deepEqual(requestsFor(Key).filter(isAbort).map((r) => r.status), [403, 204]);
  });

  test('a part that fails once is retried by the SDK and the upload completes', async () => {
    const Key = 'retried-part.parquet';
    s3.injectFault({ kind: 'internal-error', match: (r) => r.key === Key && r.query.partNumber === '2' });
    const body = randomBytes(10 * MiB + 1);
    await new Upload({ client: clientFor(s3.endpoint, KEYS.full), params: { Bucket: BUCKET, Key, Body: body }, partSize: PART_SIZE }).done();
    const part2 = requestsFor(Key).filter((r) => isPart(r) && r.query.partNumber === '2');
    assert.deepEqual(part2.map((r) => r.status), [500, 200]);
    assert.equal(sha256((await s3.getObject(BUCKET, Key)) ?? new Uint8Array()), sha256(body));
  });

  test('an Upload that fails for good aborts its multipart upload (no dangling parts)', async () => {
    const Key = 'failed.parquet';
    s3.injectFault({ kind: 'reset', times: 10, match: (r) => r.key === Key && r.query.partNumber === '2' });
    const upload = new Upload({
      client: clientFor(s3.endpoint, KEYS.full, { maxAttempts: 1 }),
      params: { Bucket: BUCKET, Key, Body: randomBytes(10 * MiB + 1) },
      partSize: PART_SIZE,
      queueSize: 1,
    });
    const err = await thrownBy(upload.done());
    assert.equal(classifyS3Error(err).kind, 'transient');
    assert.deepEqual(requestsFor(Key).filter(isAbort).map((r) => r.status), [204]);
    assert.deepEqual(await s3.listObjects(BUCKET, Key), []);
  });
});
