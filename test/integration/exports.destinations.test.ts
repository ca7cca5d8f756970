// Export destinations through HTTP against a SigV4-checking S3: validation errors, delete permission, rotation,
// secrets never returned, tenant isolation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ALL_S3_PERMISSIONS, closedPortEndpoint, startNotS3Server, type NotS3Server, type TestS3 } from '../helpers/s3/index.ts';
import { startTestBerth, type TestBerth } from '../helpers/berth.ts';
import { destinationBody, FULL_KEY, NO_DELETE_KEY, READ_ONLY_KEY, startExportS3 } from '../helpers/exports.ts';

let server: TestBerth;
let s3: TestS3;
let notS3: NotS3Server;

before(async () => {
  [server, s3, notS3] = await Promise.all([startTestBerth(), startExportS3(['exports', 'other']), startNotS3Server()]);
});
after(async () => {
  await server.close();
  await s3.stop();
  await notS3.stop();
});

const PATH = '/api/v1/bulk-exports/destinations';

describe('creating a destination', () => {
  test('validates by writing, reading back and deleting a test file under <prefix>/tmp/', async () => {
    const created = await server.api('POST', PATH, { body: destinationBody(s3, { prefix: '/team//exports/' }) });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.destination_type, 's3');
    assert.equal(created.body.tenant_id, server.workspaceId);
    assert.deepEqual(created.body.credentials_keys, ['access_key_id', 'secret_access_key']);
    assert.deepEqual(created.body.config, {
      bucket_name: 'exports', prefix: '/team//exports/', region: 'us-east-1', endpoint_url: s3.endpoint, include_bucket_in_prefix: false,
    });
    assert.ok(!JSON.stringify(created.body).includes(FULL_KEY.secretAccessKey), 'the secret is never returned');
    const puts = s3.requests.filter((request) => request.method === 'PUT' && request.key?.startsWith('team/exports/tmp/'));
    assert.equal(puts.length, 1, 'one test object written under <prefix>/tmp/');
    assert.match(puts[0]!.key!, /^team\/exports\/tmp\/[0-9a-f-]{36}\.txt$/);
    assert.ok(s3.requests.some((request) => request.method === 'GET' && request.key === puts[0]!.key && request.status === 200), 'read back');
    assert.deepEqual(await s3.listObjects('exports', 'team/exports/tmp/'), [], 'deleted afterwards');

    const fetched = await server.api('GET', `${PATH}/${created.body.id}`);
    assert.equal(fetched.status, 200);
    assert.deepEqual(fetched.body, created.body);
    const listed = await server.api('GET', PATH);
    assert.ok(listed.body.some((item: any) => item.id === created.body.id));
  });

  test('keeps going when delete is denied: the test file stays', async () => {
    const created = await server.api('POST', PATH, { body: destinationBody(s3, { bucket: 'other', prefix: 'nodelete', key: NO_DELETE_KEY }) });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const left = await s3.listObjects('other', 'nodelete/tmp/');
    assert.equal(left.length, 1);
  });

  test('include_bucket_in_prefix puts the bucket name first in every key', async () => {
    const created = await server.api('POST', PATH, { body: destinationBody(s3, { bucket: 'other', prefix: 'inc', include_bucket_in_prefix: true }) });
    assert.equal(created.status, 201);
    assert.ok(s3.requests.some((request) => request.method === 'PUT' && request.bucket === 'other' && request.key?.startsWith('other/inc/tmp/')));
  });

  const failures: [string, () => object, string][] = [
    ['a key without write permission', () => destinationBody(s3, { key: READ_ONLY_KEY }), 'Access denied'],
    ['a wrong secret', () => destinationBody(s3, { key: { accessKeyId: FULL_KEY.accessKeyId, secretAccessKey: 'wrong' } }), 'Access denied'],
    ['a missing bucket', () => destinationBody(s3, { bucket: 'no-such-bucket' }), 'Bucket is not valid'],
    ['an unknown access key', () => destinationBody(s3, { key: { accessKeyId: 'AKIAUNKNOWN000000001', secretAccessKey: 'x' } }), 'Key ID you provided does not exist'],
    ['an endpoint that answers but is not S3', () => destinationBody(s3, { endpoint: notS3.endpoint }), 'Invalid endpoint'],
    ['an endpoint nobody listens on', () => destinationBody(s3, { endpoint: closedEndpoint }), 'Invalid endpoint'],
    ['an endpoint that is not a URL', () => destinationBody(s3, { endpoint: 'not a url' }), 'Invalid endpoint'],
  ];
  let closedEndpoint = '';
  before(async () => {
    closedEndpoint = await closedPortEndpoint();
  });
  for (const [what, body, detail] of failures) {
    test(`${what} answers 400 "${detail}" and stores nothing`, async () => {
      const before = (await server.api('GET', PATH)).body.length;
      const response = await server.api('POST', PATH, { body: body() });
      assert.equal(response.status, 400, JSON.stringify(response.body));
      assert.deepEqual(response.body, { detail });
      assert.equal((await server.api('GET', PATH)).body.length, before);
    });
  }

  test('a malformed body is a 422 listing every bad field', async () => {
    const response = await server.api('POST', PATH, { body: { destination_type: 'gcs', config: { prefix: 3 } } });
    assert.equal(response.status, 422);
    const locs = response.body.detail.map((item: any) => item.loc.join('.'));
    for (const loc of ['body.destination_type', 'body.display_name', 'body.config.bucket_name', 'body.config.prefix']) {
      assert.ok(locs.includes(loc), `${loc} in ${locs.join(', ')}`);
    }
  });

  test('without credentials the standard AWS credential chain of the environment is used', async () => {
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    process.env.AWS_ACCESS_KEY_ID = NO_DELETE_KEY.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = NO_DELETE_KEY.secretAccessKey;
    try {
      const created = await server.api('POST', PATH, { body: destinationBody(s3, { prefix: 'envchain', key: null }) });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.deepEqual(created.body.credentials_keys, []);
      assert.ok(s3.requests.some((request) => request.method === 'PUT' && request.key?.startsWith('envchain/tmp/') && request.accessKeyId === NO_DELETE_KEY.accessKeyId));
    } finally {
      if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
      else process.env.AWS_ACCESS_KEY_ID = saved.id;
      if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
      else process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
    }
  });

  test('temporary credentials: the session token is used and listed, never returned', async () => {
    s3.addKey({ accessKeyId: 'ASIATEMPORARY0000001', secretAccessKey: 'temp-secret', sessionToken: 'token-123', allow: new Set(ALL_S3_PERMISSIONS) });
    const body = { ...destinationBody(s3, { prefix: 'temp', key: null }), credentials: { access_key_id: 'ASIATEMPORARY0000001', secret_access_key: 'temp-secret', session_token: 'token-123' } };
    const created = await server.api('POST', PATH, { body });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body.credentials_keys, ['access_key_id', 'secret_access_key', 'session_token']);
    assert.ok(!JSON.stringify(created.body).includes('token-123'));
    const wrongToken = await server.api('POST', PATH, { body: { ...body, credentials: { ...body.credentials, session_token: 'nope' } } });
    assert.equal(wrongToken.status, 400);
    assert.deepEqual(wrongToken.body, { detail: 'Access denied' });
  });

  test('credentials are stored encrypted', async () => {
    const created = await server.api('POST', PATH, { body: destinationBody(s3) });
    const rows = await server.berth.db.query<{ credentials_sealed: string }>('SELECT credentials_sealed FROM bulk_export_destinations WHERE id = $1', [created.body.id]);
    assert.match(rows[0]!.credentials_sealed, /^v1:/);
    assert.ok(!rows[0]!.credentials_sealed.includes(FULL_KEY.secretAccessKey));
  });
});

describe('rotating credentials', () => {
  test('new credentials are validated before they replace the old ones', async () => {
    const created = await server.api('POST', PATH, { body: destinationBody(s3) });
    const id = created.body.id;
    const bad = await server.api('PATCH', `${PATH}/${id}`, { body: { credentials: { access_key_id: READ_ONLY_KEY.accessKeyId, secret_access_key: READ_ONLY_KEY.secretAccessKey } } });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, { detail: 'Access denied' });
    const good = await server.api('PATCH', `${PATH}/${id}`, { body: { credentials: { access_key_id: NO_DELETE_KEY.accessKeyId, secret_access_key: NO_DELETE_KEY.secretAccessKey, session_token: null } } });
    assert.equal(good.status, 200, JSON.stringify(good.body));
    assert.deepEqual(good.body.credentials_keys, ['access_key_id', 'secret_access_key']);
    // The rotated key is the one used from now on: it has no delete permission, so its test file stayed.
    const deniedDeletes = s3.requests.filter((request) => request.method === 'DELETE' && request.accessKeyId === NO_DELETE_KEY.accessKeyId);
    assert.ok(deniedDeletes.length > 0 && deniedDeletes.every((request) => request.status === 403));
  });

  test('an unknown destination is a 404', async () => {
    const response = await server.api('PATCH', `${PATH}/00000000-0000-4000-8000-000000000000`, { body: { display_name: 'x' } });
    assert.equal(response.status, 404);
  });
});

describe('tenant isolation', () => {
  test("another workspace's destination is a 404", async () => {
    const created = await server.api('POST', PATH, { body: destinationBody(s3) });
    const workspace = await server.api('POST', '/api/v1/workspaces', { body: { name: 'isolated' } });
    assert.equal(workspace.status, 201);
    const headers = { 'x-tenant-id': workspace.body.id };
    assert.equal((await server.api('GET', `${PATH}/${created.body.id}`, { headers })).status, 404);
    assert.equal((await server.api('PATCH', `${PATH}/${created.body.id}`, { headers, body: { display_name: 'stolen' } })).status, 404);
    assert.deepEqual((await server.api('GET', PATH, { headers })).body, []);
  });
});
