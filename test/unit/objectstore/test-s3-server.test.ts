// The test S3 server itself: if it let bad signatures or forbidden actions through, the destination tests above
// would prove nothing.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { EMULATOR_MAX_BODY_BYTES, startTestS3 } from '../../helpers/s3/index.ts';
import { classifyS3Error } from '../../../src/platform/objectstore/index.ts';
import type { TestS3 } from '../../helpers/s3/index.ts';
import { ALL_KEYS, clientFor, KEYS, thrownBy } from './fixtures.ts';

const BUCKET = 'harness';

/** A client whose requests are altered after they were signed, as a broken proxy or an attacker would. */
function tamperingClient(endpoint: string, tamper: (request: { headers: Record<string, string>; body?: unknown }) => void) {
  const client = clientFor(endpoint, KEYS.full, { maxAttempts: 1 });
  client.middlewareStack.add(
    (next) => async (args) => {
      tamper(args.request as { headers: Record<string, string>; body?: unknown });
      return next(args);
    },
    // The deserialize step runs after signing, right before the request is sent.
    { step: 'deserialize', priority: 'low', name: 'tamperAfterSigning' },
  );
  return client;
}

describe('test S3 server', () => {
  let s3: TestS3;

  before(async () => {
    s3 = await startTestS3({ keys: ALL_KEYS, buckets: [BUCKET] });
  });
  after(async () => {
    await s3.stop();
  });

  test('a correctly signed request with an encoded key goes through to the emulator', async () => {
    const Key = 'folder with space/plus+tilde~ümlaut.txt';
    await clientFor(s3.endpoint, KEYS.full).send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: 'ok' }));
    assert.equal((await s3.getObject(BUCKET, Key))?.toString(), 'ok');
  });

  test('a header changed after signing is refused with SignatureDoesNotMatch', async () => {
    const client = tamperingClient(s3.endpoint, (request) => {
      request.headers['content-type'] = 'application/x-evil';
    });
    const err = await thrownBy(client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'tampered-header', Body: 'x' })));
    assert.equal(err.name, 'SignatureDoesNotMatch');
    assert.equal((err.$metadata as { httpStatusCode?: number }).httpStatusCode, 403);
    assert.equal(await s3.getObject(BUCKET, 'tampered-header'), undefined);
  });

  test('a body that does not match its signed hash is refused and not stored', async () => {
    const client = tamperingClient(s3.endpoint, (request) => {
      request.body = 'EVIL!'; // same length, different bytes
    });
    const err = await thrownBy(client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'tampered-body', Body: 'good!' })));
    assert.equal(err.name, 'XAmzContentSHA256Mismatch');
    assert.equal(await s3.getObject(BUCKET, 'tampered-body'), undefined);
  });

  test('the access key id of a refused signature is reported as S3 does', async () => {
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKIAWHOAMI', secretAccessKey: 'x' },
      maxAttempts: 1,
    });
    const err = await thrownBy(client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'any' })));
    assert.equal(err.name, 'InvalidAccessKeyId');
    assert.equal(err.AWSAccessKeyId, 'AKIAWHOAMI');
    assert.equal(err.message, 'The AWS Access Key Id you provided does not exist in our records.');
  });

  test('anonymous requests get the XML AccessDenied of a private bucket', async () => {
    const answer = await fetch(`${s3.endpoint}/${BUCKET}/anything`);
    assert.equal(answer.status, 403);
    assert.equal(answer.headers.get('content-type'), 'application/xml');
    assert.match(await answer.text(), /<Error><Code>AccessDenied<\/Code><Message>Access Denied<\/Message>/);
  });

  test('each permission guards its own S3 actions', async () => {
    const putOnly = { accessKeyId: 'AKIAPUTONLY', secretAccessKey: 'put-only', allow: new Set(['put'] as const) };
    s3.addKey(putOnly);
    const client = clientFor(s3.endpoint, putOnly, { maxAttempts: 1 });
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'put-only', Body: 'x' }));
    const denied = [
      await thrownBy(client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'put-only' }))),
      await thrownBy(client.send(new ListObjectsV2Command({ Bucket: BUCKET }))),
      await thrownBy(client.send(new CreateBucketCommand({ Bucket: 'new-bucket' }))),
    ];
    assert.deepEqual(denied.map((e) => e.name), ['AccessDenied', 'AccessDenied', 'AccessDenied']);
    assert.deepEqual(
      s3.requests.filter((r) => r.accessKeyId === putOnly.accessKeyId).map((r) => `${r.permission} ${r.status}`),
      ['put 200', 'get 403', 'list 403', 'createBucket 403'],
    );
  });

  test('a large upload (sent with Expect: 100-continue) that is refused gets the S3 error, not a broken pipe', async () => {
    const err = await thrownBy(
      clientFor(s3.endpoint, KEYS.readOnly, { maxAttempts: 1 }).send(
        new PutObjectCommand({ Bucket: BUCKET, Key: 'large-refused', Body: randomBytes(6 * 1024 * 1024) }),
      ),
    );
    assert.equal(err.name, 'AccessDenied');
  });

  test('a single request larger than the emulator takes is refused up front with EntityTooLarge', async () => {
    const err = await thrownBy(
      clientFor(s3.endpoint, KEYS.full, { maxAttempts: 1 }).send(
        new PutObjectCommand({ Bucket: BUCKET, Key: 'too-large', Body: Buffer.alloc(EMULATOR_MAX_BODY_BYTES + 1) }),
      ),
    );
    assert.equal(err.name, 'EntityTooLarge');
    assert.equal(classifyS3Error(err).retryable, false);
    assert.equal(await s3.getObject(BUCKET, 'too-large'), undefined);
  });

  test('aws-chunked streaming bodies with checksum trailers are forwarded intact', async () => {
    // The SDK's default checksum mode: stream bodies go out as aws-chunked with a trailing CRC32.
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: KEYS.full.accessKeyId, secretAccessKey: KEYS.full.secretAccessKey },
      requestChecksumCalculation: 'WHEN_SUPPORTED',
    });
    const parts = [Buffer.from('first chunk|'), randomBytes(300_000), Buffer.from('|last chunk')];
    const whole = Buffer.concat(parts);
    await client.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: 'chunked', Body: Readable.from(parts), ContentLength: whole.length }),
    );
    assert.ok((await s3.getObject(BUCKET, 'chunked'))?.equals(whole), 'stored without the chunk framing');
  });

  test('faults hit only matching requests, exactly as often as asked', async () => {
    const fault = s3.injectFault({ kind: 'internal-error', times: 2, match: (r) => r.key === 'flaky' });
    const client = clientFor(s3.endpoint, KEYS.full, { maxAttempts: 1 });
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'steady', Body: 'x' }));
    const statuses: string[] = [];
    for (let i = 0; i < 3; i++) {
      try {
        await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'flaky', Body: 'x' }));
        statuses.push('ok');
      } catch (err) {
        statuses.push((err as Error).name);
      }
    }
    assert.deepEqual(statuses, ['InternalError', 'InternalError', 'ok']);
    assert.deepEqual({ hits: fault.hits, remaining: fault.remaining }, { hits: 2, remaining: 0 });
  });

  test('deleteBucket removes a bucket with objects in it', async () => {
    await s3.createBucket('short-lived');
    await s3.putObject('short-lived', 'a/b.txt', 'x');
    await s3.deleteBucket('short-lived');
    const err = await thrownBy(
      clientFor(s3.endpoint, KEYS.full, { maxAttempts: 1 }).send(
        new PutObjectCommand({ Bucket: 'short-lived', Key: 'c', Body: 'x' }),
      ),
    );
    assert.equal(err.name, 'NoSuchBucket');
  });
});
