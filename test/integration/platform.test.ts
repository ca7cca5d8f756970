// Platform behaviour through HTTP: authentication, tenancy, error bodies, OpenAPI.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiClient, startTestBerth, type TestBerth } from '../helpers/berth.ts';

let server: TestBerth;
before(async () => {
  server = await startTestBerth();
});
after(() => server.close());

describe('public routes', () => {
  test('/ok, /openapi.json and /docs need no key', async () => {
    assert.deepEqual((await server.api('GET', '/ok', { key: null })).body, { ok: true });
    const openapi = await server.api('GET', '/openapi.json', { key: null });
    assert.equal(openapi.status, 200);
    assert.equal(openapi.body.openapi, '3.1.0');
    assert.ok(openapi.body.paths['/v2/deployments/{deployment_id}/revisions'].get, 'list revisions documented');
    assert.deepEqual(Object.keys(openapi.body.components.securitySchemes).sort(), ['API Key', 'Bearer Auth', 'Tenant ID']);
    const docs = await fetch(`${server.url}/docs`, { redirect: 'follow' });
    assert.equal(docs.status, 200);
    assert.match(await docs.text(), /<html/i);
  });

  test('unknown routes answer a FastAPI-shaped 404', async () => {
    const response = await server.api('GET', '/nope');
    assert.equal(response.status, 404);
    assert.deepEqual(response.body, { detail: 'Not Found' });
  });

  test('every response carries a request id', async () => {
    const response = await server.api('GET', '/ok', { headers: { 'x-request-id': 'abc-123' } });
    assert.equal(response.headers.get('x-request-id'), 'abc-123');
  });
});

describe('authentication', () => {
  test('missing and wrong keys are 401 with a detail', async () => {
    const missing = await server.api('GET', '/v2/deployments', { key: null });
    assert.equal(missing.status, 401);
    assert.deepEqual(missing.body, { detail: 'Missing API key: send it in the X-Api-Key header.' });
    const wrong = await server.api('GET', '/v2/deployments', { key: 'not-a-key' });
    assert.equal(wrong.status, 401);
    assert.deepEqual(wrong.body, { detail: 'Invalid API key.' });
  });

  test('the header name is case-insensitive and a bearer token works too', async () => {
    const upper = await fetch(`${server.url}/v2/deployments`, { headers: { 'X-API-KEY': server.apiKey } });
    assert.equal(upper.status, 200);
    const bearer = await server.api('GET', '/v2/deployments', { key: null, headers: { authorization: `Bearer ${server.apiKey}` } });
    assert.equal(bearer.status, 200);
    const badBearer = await server.api('GET', '/v2/deployments', { key: null, headers: { authorization: 'Bearer nope' } });
    assert.equal(badBearer.status, 401);
  });

  test('workspaces, scoped keys and X-Tenant-Id', async () => {
    const created = await server.api('POST', '/api/v1/workspaces', { body: { name: 'second' } });
    assert.equal(created.status, 201);
    const second = created.body.id as string;

    // The admin key may act in another workspace of its organization.
    const asAdmin = await server.api('GET', '/v2/deployments', { headers: { 'x-tenant-id': second } });
    assert.equal(asAdmin.status, 200);

    const memberKey = await server.api('POST', '/api/v1/api-keys', { body: { workspace_id: second, description: 'member' } });
    assert.equal(memberKey.status, 201);
    assert.equal(memberKey.body.api_key.workspace_id, second);
    const member = apiClient(server.url, memberKey.body.key);
    assert.equal((await member('GET', '/v2/deployments')).status, 200, 'defaults to its own workspace');
    const foreign = await member('GET', '/v2/deployments', { headers: { 'x-tenant-id': server.workspaceId } });
    assert.equal(foreign.status, 403);
    assert.match(foreign.body.detail, /may not use workspace/);
    assert.equal((await member('GET', '/api/v1/workspaces')).status, 403, 'admin routes need an admin key');

    const orgKey = await server.api('POST', '/api/v1/api-keys', { body: { organization_scoped: true } });
    const org = apiClient(server.url, orgKey.body.key);
    const noTenant = await org('GET', '/v2/deployments');
    assert.equal(noTenant.status, 403);
    assert.match(noTenant.body.detail, /X-Tenant-Id/);
    assert.equal((await org('GET', '/v2/deployments', { headers: { 'X-Tenant-ID': second } })).status, 200);
    assert.equal((await org('GET', '/v2/deployments', { headers: { 'x-tenant-id': 'garbage' } })).status, 403);
    assert.equal((await org('GET', '/v2/deployments', { headers: { 'x-tenant-id': '00000000-0000-4000-8000-000000000000' } })).status, 403);

    // Keys are stored hashed: the listing has a prefix, never the key.
    const keys = await server.api('GET', '/api/v1/api-keys');
    assert.ok(keys.body.length >= 3);
    assert.ok(!JSON.stringify(keys.body).includes(memberKey.body.key));

    const revoked = await server.api('DELETE', `/api/v1/api-keys/${memberKey.body.api_key.id}`);
    assert.equal(revoked.status, 204);
    assert.equal((await member('GET', '/v2/deployments')).status, 401);
  });
});

describe('request errors', () => {
  test('malformed JSON is a json_invalid 422 at the character position', async () => {
    const response = await server.api('POST', '/v2/deployments', { rawBody: 'not json' });
    assert.equal(response.status, 422);
    assert.deepEqual(response.body, { detail: [{ type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error', input: {}, ctx: { error: 'Expecting value' } }] });
  });

  test('an absent body is missing at ["body"]', async () => {
    const response = await server.api('POST', '/v2/deployments');
    assert.equal(response.status, 422);
    assert.deepEqual(response.body, { detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }] });
  });
});
