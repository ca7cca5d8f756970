import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { closedPortEndpoint, startNotS3Server, startTestS3 } from '../../helpers/s3/index.ts';
import type { TestS3 } from '../../helpers/s3/index.ts';
import { createS3Client, validateDestination } from '../../../src/platform/objectstore/index.ts';
import type { DestinationValidation } from '../../../src/platform/objectstore/index.ts';
import { ALL_KEYS, clientFor, KEYS } from './fixtures.ts';

const BUCKET = 'exports';
const TEST_FILE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.txt$/;

function assertFailure(result: DestinationValidation, kind: string, detail: string) {
  assert.equal(result.ok, false, `expected a failure, got ${JSON.stringify(result)}`);
  if (result.ok) return;
  assert.equal(result.kind, kind);
  assert.equal(result.detail, detail);
}

function assertSucceeded(result: DestinationValidation): asserts result is Extract<DestinationValidation, { ok: true }> {
  assert.equal(result.ok, true, `expected success, got ${JSON.stringify(result)}`);
}

describe('validateDestination', () => {
  let s3: TestS3;

  before(async () => {
    s3 = await startTestS3({ keys: ALL_KEYS, buckets: [BUCKET] });
  });
  after(async () => {
    await s3.stop();
  });

  test('writes the test file under <prefix>/tmp/, reads it back and deletes it', async () => {
    const result = await validateDestination(clientFor(s3.endpoint, KEYS.full), { bucket: BUCKET, prefix: 'berth/runs' });
    assertSucceeded(result);
    assert.equal(result.deleted, true);
    assert.equal(result.readBack, true);
    const [root, folder, tmp, file] = result.key.split('/');
    assert.deepEqual([root, folder, tmp], ['berth', 'runs', 'tmp']);
    assert.match(file ?? '', TEST_FILE);
    const seen = s3.requests.filter((r) => r.key === result.key).map((r) => `${r.method} ${r.status}`);
    assert.deepEqual(seen, ['PUT 200', 'GET 200', 'DELETE 204']);
    assert.deepEqual(await s3.listObjects(BUCKET, 'berth/'), []);
  });

  test('a key that may not delete passes, and the test file stays in the bucket', async () => {
    const result = await validateDestination(clientFor(s3.endpoint, KEYS.noDelete), { bucket: BUCKET, prefix: 'keep' });
    assertSucceeded(result);
    assert.equal(result.deleted, false);
    assert.equal(result.readBack, true);
    assert.deepEqual(
      (await s3.listObjects(BUCKET, 'keep/')).map((o) => o.key),
      [result.key],
    );
    assert.match((await s3.getObject(BUCKET, result.key))?.toString('utf8') ?? '', /^Berth export destination check /);
    const refusedDelete = s3.requests.find((r) => r.key === result.key && r.method === 'DELETE');
    assert.equal(refusedDelete?.error, 'AccessDenied');
  });

  test('a key that may not read passes without comparing, and still cleans up', async () => {
    const result = await validateDestination(clientFor(s3.endpoint, KEYS.noRead), { bucket: BUCKET, prefix: 'noread' });
    assertSucceeded(result);
    assert.equal(result.readBack, false);
    assert.equal(result.deleted, true);
    assert.deepEqual(await s3.listObjects(BUCKET, 'noread/'), []);
  });

  test('a key that may not write: Access denied, nothing written', async () => {
    const result = await validateDestination(clientFor(s3.endpoint, KEYS.readOnly), { bucket: BUCKET, prefix: 'ro' });
    assertFailure(result, 'access_denied', 'Access denied');
    assert.equal(result.ok || result.step, 'write');
    assert.deepEqual(await s3.listObjects(BUCKET, 'ro/'), []);
  });

  test('an unknown access key id: Key ID you provided does not exist', async () => {
    const client = createS3Client({
      endpointUrl: s3.endpoint,
      credentials: { accessKeyId: 'AKIANOSUCHKEY', secretAccessKey: KEYS.full.secretAccessKey },
    });
    const result = await validateDestination(client, { bucket: BUCKET, prefix: 'x' });
    assertFailure(result, 'invalid_key_id', 'Key ID you provided does not exist');
    assert.match(result.ok ? '' : result.message, /InvalidAccessKeyId/);
  });

  // S3 answers a wrong secret with SignatureDoesNotMatch; the spec lists invalid credentials under "Access denied".
  test('a wrong secret: Access denied (SignatureDoesNotMatch)', async () => {
    const client = createS3Client({
      endpointUrl: s3.endpoint,
      credentials: { accessKeyId: KEYS.full.accessKeyId, secretAccessKey: 'not-the-secret' },
    });
    const result = await validateDestination(client, { bucket: BUCKET, prefix: 'wrong-secret' });
    assertFailure(result, 'access_denied', 'Access denied');
    assert.match(result.ok ? '' : result.message, /SignatureDoesNotMatch/);
    assert.deepEqual(await s3.listObjects(BUCKET, 'wrong-secret/'), []);
  });

  test('a bucket that does not exist: Bucket is not valid', async () => {
    const result = await validateDestination(clientFor(s3.endpoint, KEYS.full), { bucket: 'no-such-bucket', prefix: '' });
    assertFailure(result, 'invalid_bucket', 'Bucket is not valid');
    assert.match(result.ok ? '' : result.message, /NoSuchBucket/);
  });

  test('a client signing for another region than the bucket: Bucket is not valid', async () => {
    const { accessKeyId, secretAccessKey } = KEYS.full;
    const client = createS3Client({ endpointUrl: s3.endpoint, region: 'eu-west-1', credentials: { accessKeyId, secretAccessKey } });
    const result = await validateDestination(client, { bucket: BUCKET, prefix: 'region' });
    assertFailure(result, 'invalid_bucket', 'Bucket is not valid');
    assert.match(result.ok ? '' : result.message, /AuthorizationHeaderMalformed/);
  });

  test('a web server that answers 200 with HTML: Invalid endpoint', async () => {
    const web = await startNotS3Server();
    try {
      const result = await validateDestination(clientFor(web.endpoint, KEYS.full), { bucket: BUCKET, prefix: 'p' });
      assertFailure(result, 'invalid_endpoint', 'Invalid endpoint');
      assert.equal(result.ok || result.step, 'compare');
      assert.ok(web.requestCount >= 2, 'the PUT and the GET reached the web server');
    } finally {
      await web.stop();
    }
  });

  test('nothing listening on the port: Invalid endpoint', async () => {
    const endpoint = await closedPortEndpoint();
    const result = await validateDestination(clientFor(endpoint, KEYS.full, { maxAttempts: 1 }), { bucket: BUCKET, prefix: 'p' });
    assertFailure(result, 'invalid_endpoint', 'Invalid endpoint');
    assert.match(result.ok ? '' : result.message, /ECONNREFUSED/);
  });

  test('include_bucket_in_prefix puts the bucket name first in the key', async () => {
    const result = await validateDestination(clientFor(s3.endpoint, KEYS.noDelete), {
      bucket: BUCKET,
      prefix: 'legacy',
      includeBucketInPrefix: true,
    });
    assertSucceeded(result);
    assert.match(result.key, /^exports\/legacy\/tmp\/[^/]+\.txt$/);
    assert.deepEqual(
      (await s3.listObjects(BUCKET, 'exports/legacy/tmp/')).map((o) => o.key),
      [result.key],
    );
  });

  test('prefix slashes are normalised: no leading, doubled or trailing slashes in keys', async () => {
    const messy = await validateDestination(clientFor(s3.endpoint, KEYS.noDelete), { bucket: BUCKET, prefix: '//a///b//' });
    assertSucceeded(messy);
    assert.match(messy.key, /^a\/b\/tmp\/[^/]+\.txt$/);
    const none = await validateDestination(clientFor(s3.endpoint, KEYS.full), { bucket: BUCKET, prefix: '/' });
    assertSucceeded(none);
    assert.match(none.key, /^tmp\/[^/]+\.txt$/);
    assert.deepEqual((await s3.listObjects(BUCKET, 'a/b/tmp/')).map((o) => o.key), [messy.key]);
  });

  test('temporary credentials: accepted with their session token, refused without or with another', async () => {
    const withToken = await validateDestination(clientFor(s3.endpoint, KEYS.temporary), { bucket: BUCKET, prefix: 'sts' });
    assertSucceeded(withToken);
    assert.ok(s3.requests.some((r) => r.key === withToken.key && r.accessKeyId === KEYS.temporary.accessKeyId));

    const { accessKeyId, secretAccessKey } = KEYS.temporary;
    const noToken = createS3Client({ endpointUrl: s3.endpoint, credentials: { accessKeyId, secretAccessKey } });
    assertFailure(await validateDestination(noToken, { bucket: BUCKET, prefix: 'sts' }), 'invalid_key_id', 'Key ID you provided does not exist');

    const otherToken = createS3Client({
      endpointUrl: s3.endpoint,
      credentials: { accessKeyId, secretAccessKey, sessionToken: 'some-other-token' },
    });
    assertFailure(await validateDestination(otherToken, { bucket: BUCKET, prefix: 'sts' }), 'access_denied', 'Access denied');
  });

  test('without credentials the SDK default chain is used (here: the environment)', async () => {
    const saved = { ...process.env };
    process.env.AWS_ACCESS_KEY_ID = KEYS.full.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = KEYS.full.secretAccessKey;
    delete process.env.AWS_SESSION_TOKEN;
    delete process.env.AWS_PROFILE;
    try {
      const result = await validateDestination(createS3Client({ endpointUrl: s3.endpoint }), { bucket: BUCKET, prefix: 'env' });
      assertSucceeded(result);
      const put = s3.requests.find((r) => r.key === result.key && r.method === 'PUT');
      assert.equal(put?.accessKeyId, KEYS.full.accessKeyId);
    } finally {
      process.env = saved;
    }
  });
});
