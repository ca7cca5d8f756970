import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createS3Client, destinationKey, destinationRoot, joinKey } from '../../../src/platform/objectstore/index.ts';

describe('createS3Client', () => {
  test('a custom endpoint gets path style, us-east-1 and checksums only where required', async () => {
    const client = createS3Client({
      endpointUrl: 'http://127.0.0.1:9000',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    });
    assert.equal(await client.config.region(), 'us-east-1');
    assert.equal(client.config.forcePathStyle, true);
    assert.equal(await client.config.requestChecksumCalculation(), 'WHEN_REQUIRED');
    assert.equal(await client.config.responseChecksumValidation(), 'WHEN_REQUIRED');
    assert.equal(await client.config.maxAttempts(), 3);
    const endpoint = await client.config.endpoint?.();
    assert.equal(`${endpoint?.protocol}//${endpoint?.hostname}:${endpoint?.port}`, 'http://127.0.0.1:9000');
  });

  test('AWS S3 (no endpoint) keeps virtual-hosted style and the given region', async () => {
    const client = createS3Client({ region: 'eu-central-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
    assert.equal(await client.config.region(), 'eu-central-1');
    assert.equal(client.config.forcePathStyle, false);
    assert.equal(client.config.endpoint, undefined);
  });

  test('an empty session token is left out instead of being sent as an empty header', async () => {
    const client = createS3Client({
      endpointUrl: 'http://127.0.0.1:9000',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b', sessionToken: '' },
    });
    const identity = await client.config.credentials();
    assert.equal(identity.accessKeyId, 'a');
    assert.equal('sessionToken' in identity, false);
  });

  test('tuning overrides reach the SDK', async () => {
    const client = createS3Client({ endpointUrl: 'http://127.0.0.1:9000' }, { maxAttempts: 7 });
    assert.equal(await client.config.maxAttempts(), 7);
  });
});

describe('object keys', () => {
  test('joinKey drops empty segments from any part', () => {
    assert.equal(joinKey('/a//b/', '', 'c/', '/d.parquet'), 'a/b/c/d.parquet');
    assert.equal(joinKey('', '/'), '');
  });

  test('the bucket is the first folder only with includeBucketInPrefix', () => {
    assert.equal(destinationRoot({ bucket: 'bkt', prefix: '/exports/' }), 'exports');
    assert.equal(destinationRoot({ bucket: 'bkt', prefix: '/exports/', includeBucketInPrefix: true }), 'bkt/exports');
    assert.equal(destinationRoot({ bucket: 'bkt', prefix: '', includeBucketInPrefix: true }), 'bkt');
    assert.equal(
      destinationKey({ bucket: 'bkt', prefix: 'p' }, 'export_id=1', 'runs/year=2025', 'f.parquet'),
      'p/export_id=1/runs/year=2025/f.parquet',
    );
  });
});
