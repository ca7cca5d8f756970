// Classification of what the real SDK throws against the test S3 server: destination errors fail an export at once,
// transient ones are retried.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { closedPortEndpoint, startNotS3Server, startTestS3 } from '../../helpers/s3/index.ts';
import type { TestS3 } from '../../helpers/s3/index.ts';
import {
  classifyS3Error,
  createS3Client,
  destinationErrorDetail,
  isDestinationError,
} from '../../../src/platform/objectstore/index.ts';
import { ALL_KEYS, clientFor, KEYS, thrownBy } from './fixtures.ts';

const BUCKET = 'errors';

const put = (client: S3Client, key: string, bucket = BUCKET) =>
  client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'payload' }));

describe('classifyS3Error with the real SDK', () => {
  let s3: TestS3;
  let once: S3Client; // one attempt per call, so each injected fault surfaces as the error

  before(async () => {
    s3 = await startTestS3({ keys: ALL_KEYS, buckets: [BUCKET] });
    once = clientFor(s3.endpoint, KEYS.full, { maxAttempts: 1 });
  });
  after(async () => {
    once.destroy();
    await s3.stop();
  });

  test('500 InternalError is transient', async () => {
    const fault = s3.injectFault({ kind: 'internal-error', match: (r) => r.key === 'f500' });
    const err = await thrownBy(put(once, 'f500'));
    assert.equal(fault.hits, 1);
    assert.equal((err as { name?: string }).name, 'InternalError');
    assert.deepEqual(
      { kind: classifyS3Error(err).kind, retryable: classifyS3Error(err).retryable, destination: isDestinationError(err) },
      { kind: 'transient', retryable: true, destination: false },
    );
  });

  test('503 SlowDown is transient', async () => {
    s3.injectFault({ kind: 'slow-down', match: (r) => r.key === 'slow' });
    const err = await thrownBy(put(once, 'slow'));
    assert.equal((err as { name?: string }).name, 'SlowDown');
    assert.equal(classifyS3Error(err).kind, 'transient');
    assert.equal(isDestinationError(err), false);
  });

  test('a reset connection is transient', async () => {
    s3.injectFault({ kind: 'reset', match: (r) => r.key === 'reset' });
    const err = await thrownBy(put(once, 'reset'));
    assert.equal((err as { code?: string }).code, 'ECONNRESET');
    assert.deepEqual(
      { kind: classifyS3Error(err).kind, retryable: classifyS3Error(err).retryable },
      { kind: 'transient', retryable: true },
    );
    assert.equal(await s3.getObject(BUCKET, 'reset'), undefined);
  });

  test('a server that stops answering times out, and that is transient', async () => {
    s3.injectFault({ kind: 'stall', match: (r) => r.key === 'stall' });
    const impatient = clientFor(s3.endpoint, KEYS.full, { maxAttempts: 1, socketTimeoutMs: 300 });
    const err = await thrownBy(put(impatient, 'stall'));
    impatient.destroy();
    assert.equal((err as { name?: string }).name, 'TimeoutError');
    assert.equal(classifyS3Error(err).kind, 'transient');
  });

  test('the SDK itself retries transient failures with the default client', async () => {
    s3.injectFault({ kind: 'internal-error', times: 2, match: (r) => r.key === 'retried' });
    const client = clientFor(s3.endpoint, KEYS.full);
    await put(client, 'retried');
    client.destroy();
    const attempts = s3.requests.filter((r) => r.key === 'retried').map((r) => r.status);
    assert.deepEqual(attempts, [500, 500, 200]);
    assert.equal((await s3.getObject(BUCKET, 'retried'))?.toString(), 'payload');
  });

  test('credentials, a missing bucket and permissions are destination errors', async () => {
    const unknownKey = createS3Client(
      { endpointUrl: s3.endpoint, credentials: { accessKeyId: 'AKIAUNKNOWN', secretAccessKey: 'x' } },
      { maxAttempts: 1 },
    );
    const wrongSecret = createS3Client(
      { endpointUrl: s3.endpoint, credentials: { accessKeyId: KEYS.full.accessKeyId, secretAccessKey: 'x' } },
      { maxAttempts: 1 },
    );
    const cases = [
      { err: await thrownBy(put(unknownKey, 'k')), name: 'InvalidAccessKeyId', kind: 'invalid_key_id' },
      { err: await thrownBy(put(wrongSecret, 'k')), name: 'SignatureDoesNotMatch', kind: 'access_denied' },
      { err: await thrownBy(put(clientFor(s3.endpoint, KEYS.readOnly), 'k')), name: 'AccessDenied', kind: 'access_denied' },
      { err: await thrownBy(put(once, 'k', 'missing-bucket')), name: 'NoSuchBucket', kind: 'invalid_bucket' },
    ];
    for (const { err, name, kind } of cases) {
      assert.equal((err as { name?: string }).name, name);
      assert.equal(classifyS3Error(err).kind, kind, name);
      assert.equal(classifyS3Error(err).retryable, false, name);
      assert.equal(isDestinationError(err), true, name);
    }
  });

  test('a HEAD refused without a body (so without an S3 code) is still Access denied', async () => {
    await s3.putObject(BUCKET, 'head-me', 'x');
    const err = await thrownBy(
      clientFor(s3.endpoint, KEYS.noRead, { maxAttempts: 1 }).send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'head-me' })),
    );
    assert.equal((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode, 403);
    assert.notEqual((err as { name?: string }).name, 'AccessDenied');
    assert.equal(classifyS3Error(err).kind, 'access_denied');
  });

  test('an HTML answer where S3 XML was expected is Invalid endpoint, unless it is a 5xx', async () => {
    const web = await startNotS3Server();
    try {
      const err = await thrownBy(clientFor(web.endpoint, KEYS.full, { maxAttempts: 1 }).send(new ListObjectsV2Command({ Bucket: BUCKET })));
      assert.deepEqual(
        { kind: classifyS3Error(err).kind, retryable: classifyS3Error(err).retryable },
        { kind: 'invalid_endpoint', retryable: false },
      );
      assert.equal(isDestinationError(err), true);
    } finally {
      await web.stop();
    }
    // A proxy's 502 page in front of a real store: same parse failure, but worth retrying.
    const badGateway = Object.assign(new Error('@aws-sdk XML parse error: bad\n  Deserialization error: …'), {
      $metadata: { httpStatusCode: 502 },
    });
    assert.equal(classifyS3Error(badGateway).kind, 'transient');
  });

  test('a refused connection is Invalid endpoint but worth retrying later', async () => {
    const err = await thrownBy(put(clientFor(await closedPortEndpoint(), KEYS.full, { maxAttempts: 1 }), 'k'));
    assert.equal((err as { code?: string }).code, 'ECONNREFUSED');
    assert.deepEqual(
      { kind: classifyS3Error(err).kind, retryable: classifyS3Error(err).retryable, destination: isDestinationError(err) },
      { kind: 'invalid_endpoint', retryable: true, destination: false },
    );
  });

  test('a malformed endpoint URL is Invalid endpoint', async () => {
    const err = await thrownBy(put(createS3Client({ endpointUrl: 'not a url', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } }), 'k'));
    assert.equal(classifyS3Error(err).kind, 'invalid_endpoint');
    assert.equal(isDestinationError(err), true);
  });
});

describe('classifyS3Error without a server', () => {
  test('DNS failures and missing credentials', () => {
    const notFound = Object.assign(new Error('getaddrinfo ENOTFOUND store.invalid'), { code: 'ENOTFOUND', $metadata: {} });
    assert.equal(classifyS3Error(notFound).kind, 'invalid_endpoint');
    const noCredentials = Object.assign(new Error('Could not load credentials from any providers'), {
      name: 'CredentialsProviderError',
    });
    assert.equal(classifyS3Error(noCredentials).kind, 'access_denied');
    assert.equal(isDestinationError(noCredentials), true);
  });

  test('unrecognised errors are unknown and not destination errors', () => {
    const odd = Object.assign(new Error('The XML you provided was not well-formed'), {
      name: 'MalformedXML',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
    });
    assert.deepEqual(classifyS3Error(odd), {
      kind: 'unknown',
      message: 'MalformedXML, HTTP 400: The XML you provided was not well-formed',
      retryable: false,
    });
    assert.equal(isDestinationError(odd), false);
    assert.equal(classifyS3Error('a string').kind, 'unknown');
  });

  test('destinationErrorDetail uses the spec words', () => {
    assert.deepEqual(
      (['access_denied', 'invalid_bucket', 'invalid_key_id', 'invalid_endpoint'] as const).map(destinationErrorDetail),
      ['Access denied', 'Bucket is not valid', 'Key ID you provided does not exist', 'Invalid endpoint'],
    );
  });
});
