// Keys with different permission sets, and what a failing call threw, shared by the object store tests.
import assert from 'node:assert/strict';
import { ALL_S3_PERMISSIONS } from '../../helpers/s3/index.ts';
import type { S3Permission, TestS3Key } from '../../helpers/s3/index.ts';
import { createS3Client } from '../../../src/platform/objectstore/index.ts';
import type { S3ClientTuning } from '../../../src/platform/objectstore/index.ts';

function key(name: string, allow: Iterable<S3Permission>, sessionToken?: string): TestS3Key {
  const base = { accessKeyId: `AKIA${name.toUpperCase()}`, secretAccessKey: `secret-of-${name}`, allow: new Set(allow) };
  return sessionToken === undefined ? base : { ...base, sessionToken };
}

export const KEYS = {
  full: key('full', ALL_S3_PERMISSIONS),
  noDelete: key('nodelete', ['put', 'get', 'list']),
  noRead: key('noread', ['put', 'delete', 'list']),
  readOnly: key('readonly', ['get', 'list']),
  noAbort: key('noabort', ['put', 'get', 'list', 'delete']),
  temporary: key('temporary', ALL_S3_PERMISSIONS, 'session-token-of-temporary'),
} satisfies Record<string, TestS3Key>;

export const ALL_KEYS: TestS3Key[] = Object.values(KEYS);

/** A client as production builds it, for one of the test keys. */
export function clientFor(endpointUrl: string, testKey: TestS3Key, tuning: S3ClientTuning = {}) {
  const { accessKeyId, secretAccessKey, sessionToken } = testKey;
  return createS3Client({ endpointUrl, credentials: { accessKeyId, secretAccessKey, sessionToken } }, tuning);
}

/** What the call threw; fails the test when it did not throw. */
export async function thrownBy(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await promise;
  } catch (err) {
    return err as Record<string, unknown>;
  }
  assert.fail('expected the call to fail');
}
