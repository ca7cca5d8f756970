// What an incoming path-style S3 request is: bucket, key, query and the permission it needs.
// The test server is path-style only (Berth uses forcePathStyle for every custom endpoint).

export type S3Permission = 'put' | 'get' | 'delete' | 'list' | 'abortMultipart' | 'createBucket' | 'deleteBucket';

export const ALL_S3_PERMISSIONS: ReadonlySet<S3Permission> = new Set([
  'put',
  'get',
  'delete',
  'list',
  'abortMultipart',
  'createBucket',
  'deleteBucket',
]);

export type S3Query = Record<string, string | string[]>;

export interface S3RequestInfo {
  method: string;
  /** Still percent-encoded, exactly as sent: the signature covers these bytes. */
  rawPath: string;
  query: S3Query;
  bucket: string | undefined;
  key: string | undefined;
  permission: S3Permission;
}

export function describeS3Request(method: string, url: string): S3RequestInfo {
  const queryStart = url.indexOf('?');
  const rawPath = queryStart === -1 ? url : url.slice(0, queryStart);
  const query = parseQuery(queryStart === -1 ? '' : url.slice(queryStart + 1));
  const slash = rawPath.indexOf('/', 1);
  const rawBucket = slash === -1 ? rawPath.slice(1) : rawPath.slice(1, slash);
  const rawKey = slash === -1 ? '' : rawPath.slice(slash + 1);
  const bucket = rawBucket ? safeDecode(rawBucket) : undefined;
  const key = rawKey ? safeDecode(rawKey) : undefined;
  return { method, rawPath, query, bucket, key, permission: permissionFor(method, bucket, key, query) };
}

// IAM action → the permission names of the test keys (s3:PutObject → put, s3:ListBucket → list, …).
function permissionFor(method: string, bucket: string | undefined, key: string | undefined, query: S3Query) {
  if (!bucket) return 'list'; // ListBuckets
  if (!key) {
    if (method === 'PUT') return 'createBucket';
    if (method === 'DELETE') return 'deleteBucket';
    if (method === 'POST') return 'delete' in query ? 'delete' : 'put'; // DeleteObjects or a form upload
    return 'list'; // ListObjects, HeadBucket
  }
  if (method === 'GET' || method === 'HEAD') return 'get';
  if (method === 'DELETE') return 'uploadId' in query ? 'abortMultipart' : 'delete';
  return 'put'; // PutObject, CopyObject, UploadPart, Create/CompleteMultipartUpload
}

// The SDK encodes spaces as %20 and "+" as %2B, so plain percent-decoding restores the values it signed.
function parseQuery(text: string): S3Query {
  const query: S3Query = {};
  for (const pair of text.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const name = safeDecode(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : safeDecode(pair.slice(eq + 1));
    const existing = query[name];
    if (existing === undefined) query[name] = value;
    else query[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return query;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
