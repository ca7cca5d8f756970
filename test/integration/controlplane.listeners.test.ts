// Listeners through the HTTP API: create/list/get/patch/delete, 409 per (workspace, compute id), error bodies, isolation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { otherWorkspace, startTestBerth, type ApiClient, type TestBerth } from '../helpers/berth.ts';

let server: TestBerth;
before(async () => {
  server = await startTestBerth();
});
after(() => server.close());

const k8s = (computeId: string, extra: Record<string, unknown> = {}) => ({ compute_type: 'k8s', compute_id: computeId, compute_config: { k8s_namespaces: ['agents'] }, ...extra });

async function create(computeId: string, api: ApiClient = server.api, extra: Record<string, unknown> = {}) {
  const response = await api('POST', '/v2/listeners', { body: k8s(computeId, extra) });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body;
}

const unknownId = '6f1c1a2e-1111-4222-8333-444455556666';
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;

describe('listeners', () => {
  test('POST is 201 with the listener; GET answers the same', async () => {
    const listener = await create('cluster-a', server.api, { version: '0.11.2', compute_config: { k8s_namespaces: ['a', 'b'], ignored: 1 } });
    assert.match(listener.id, /^[0-9a-f-]{36}$/);
    assert.match(listener.created_at, TIMESTAMP);
    assert.match(listener.updated_at, TIMESTAMP);
    assert.deepEqual({ ...listener, id: undefined, created_at: undefined, updated_at: undefined }, {
      id: undefined, created_at: undefined, updated_at: undefined,
      version: '0.11.2', compute_type: 'k8s', compute_id: 'cluster-a', compute_config: { k8s_namespaces: ['a', 'b'] },
    });
    const fetched = await server.api('GET', `/v2/listeners/${listener.id}`);
    assert.deepEqual([fetched.status, fetched.body], [200, listener]);

    const bare = await create('cluster-bare', server.api, { compute_config: {} });
    assert.deepEqual([bare.version, bare.compute_config], [null, { k8s_namespaces: null }]);
  });

  test('a second listener for the same compute id in a workspace is a 409 with the reference text', async () => {
    await create('cluster-dup');
    const again = await server.api('POST', '/v2/listeners', { body: k8s('cluster-dup', { compute_config: { k8s_namespaces: null } }) });
    assert.equal(again.status, 409);
    assert.deepEqual(again.body, { detail: `Listener for LangSmith workspace ID '${server.workspaceId}' and compute ID 'cluster-dup' already exists.` });
  });

  test('list: newest first, limit/offset and the next offset', async () => {
    const { api } = await otherWorkspace(server, 'listeners-list');
    for (const id of ['l-1', 'l-2', 'l-3']) await create(id, api);
    const page1 = await api('GET', '/v2/listeners?limit=2');
    assert.equal(page1.status, 200);
    assert.deepEqual(page1.body.resources.map((l: any) => l.compute_id), ['l-3', 'l-2']);
    assert.equal(page1.body.offset, 2);
    const page2 = await api('GET', `/v2/listeners?limit=2&offset=${page1.body.offset}`);
    assert.deepEqual(page2.body.resources.map((l: any) => l.compute_id), ['l-1']);
    assert.equal(page2.body.offset, 3);
    const all = await api('GET', '/v2/listeners');
    assert.deepEqual(all.body.resources.map((l: any) => l.compute_id), ['l-3', 'l-2', 'l-1'], 'default limit 20');
  });

  test('PATCH changes version and compute_config; absent or null fields are kept', async () => {
    const listener = await create('cluster-patch', server.api, { version: '1' });
    const version = await server.api('PATCH', `/v2/listeners/${listener.id}`, { body: { version: '2' } });
    assert.equal(version.status, 200);
    assert.deepEqual([version.body.version, version.body.compute_config], ['2', { k8s_namespaces: ['agents'] }]);
    assert.ok(version.body.updated_at >= listener.updated_at);
    const config = await server.api('PATCH', `/v2/listeners/${listener.id}`, { body: { version: null, compute_config: { k8s_namespaces: ['x'] }, compute_id: 'ignored' } });
    assert.deepEqual([config.body.version, config.body.compute_config, config.body.compute_id], ['2', { k8s_namespaces: ['x'] }, 'cluster-patch']);
    const nothing = await server.api('PATCH', `/v2/listeners/${listener.id}`, { body: {} });
    assert.deepEqual([nothing.status, nothing.body], [200, config.body]);
    assert.deepEqual((await server.api('GET', `/v2/listeners/${listener.id}`)).body, config.body);
  });

  test('DELETE is 204, then 404; the compute id is free again', async () => {
    const listener = await create('cluster-doomed');
    const deleted = await server.api('DELETE', `/v2/listeners/${listener.id}`);
    assert.deepEqual([deleted.status, deleted.body], [204, undefined]);
    const again = await server.api('DELETE', `/v2/listeners/${listener.id}`);
    assert.deepEqual([again.status, again.body], [404, { detail: `Listener ID ${listener.id} not found.` }]);
    await create('cluster-doomed');
  });
});

describe('listener errors', () => {
  test('unknown ids are 404 with the reference text on GET, PATCH and DELETE', async () => {
    for (const [method, body] of [['GET'], ['PATCH', { version: '2' }], ['PATCH', {}], ['DELETE']] as const) {
      const response = await server.api(method, `/v2/listeners/${unknownId}`, body === undefined ? {} : { body });
      assert.equal(response.status, 404, method);
      assert.deepEqual(response.body, { detail: `Listener ID ${unknownId} not found.` });
    }
  });

  test('bad path ids are uuid_parsing 422s', async () => {
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const response = await server.api(method, '/v2/listeners/not-a-uuid', method === 'PATCH' ? { body: {} } : {});
      assert.equal(response.status, 422, method);
      const error = 'invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1';
      assert.deepEqual(response.body, { detail: [{ type: 'uuid_parsing', loc: ['path', 'listener_id'], msg: `Input should be a valid UUID, ${error}`, input: 'not-a-uuid', ctx: { error } }] });
    }
  });

  test('bad create bodies: every bad field at once, in pydantic\'s shapes', async () => {
    const missing = await server.api('POST', '/v2/listeners', { body: { compute_id: 'x' } });
    assert.equal(missing.status, 422);
    assert.deepEqual(missing.body, { detail: [
      { type: 'missing', loc: ['body', 'compute_type'], msg: 'Field required', input: { compute_id: 'x' } },
      { type: 'missing', loc: ['body', 'compute_config'], msg: 'Field required', input: { compute_id: 'x' } },
    ] });

    const wrong = await server.api('POST', '/v2/listeners', { body: { compute_type: 'ecs', compute_id: '', compute_config: { k8s_namespaces: 'agents' }, version: 3 } });
    assert.equal(wrong.status, 422);
    assert.deepEqual(wrong.body, { detail: [
      { type: 'string_type', loc: ['body', 'version'], msg: 'Input should be a valid string', input: 3 },
      { type: 'literal_error', loc: ['body', 'compute_type'], msg: "Input should be 'k8s'", input: 'ecs', ctx: { expected: "'k8s'" } },
      { type: 'string_too_short', loc: ['body', 'compute_id'], msg: 'String should have at least 1 character', input: '', ctx: { min_length: 1 } },
      { type: 'list_type', loc: ['body', 'compute_config', 'k8s_namespaces'], msg: 'Input should be a valid list', input: 'agents' },
    ] });

    const none = await server.api('POST', '/v2/listeners');
    assert.deepEqual([none.status, none.body], [422, { detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }] }]);
    const notJson = await server.api('POST', '/v2/listeners', { rawBody: 'not json' });
    assert.deepEqual([notJson.status, notJson.body], [422, { detail: [{ type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error', input: {}, ctx: { error: 'Expecting value' } }] }]);
    assert.equal((await server.api('GET', '/v2/listeners')).body.resources.some((l: any) => l.compute_id === 'x'), false);
  });

  test('bad patch bodies and list parameters are 422s', async () => {
    const listener = await create('cluster-badpatch');
    const patch = await server.api('PATCH', `/v2/listeners/${listener.id}`, { body: { compute_config: { k8s_namespaces: [1] } } });
    assert.equal(patch.status, 422);
    assert.deepEqual(patch.body, { detail: [{ type: 'string_type', loc: ['body', 'compute_config', 'k8s_namespaces', 0], msg: 'Input should be a valid string', input: 1 }] });
    const notObject = await server.api('PATCH', `/v2/listeners/${listener.id}`, { body: { compute_config: 'x' } });
    assert.deepEqual(notObject.body.detail.map((item: any) => [item.type, item.loc]), [['model_attributes_type', ['body', 'compute_config']]]);
    const absent = await server.api('PATCH', `/v2/listeners/${listener.id}`);
    assert.deepEqual([absent.status, absent.body], [422, { detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }] }]);

    const limits = await server.api('GET', '/v2/listeners?limit=0&offset=-1');
    assert.equal(limits.status, 422);
    assert.deepEqual(limits.body, { detail: [
      { type: 'greater_than_equal', loc: ['query', 'limit'], msg: 'Input should be greater than or equal to 1', input: '0', ctx: { ge: 1 } },
      { type: 'greater_than_equal', loc: ['query', 'offset'], msg: 'Input should be greater than or equal to 0', input: '-1', ctx: { ge: 0 } },
    ] });
    const tooMany = await server.api('GET', '/v2/listeners?limit=101');
    assert.deepEqual(tooMany.body.detail, [{ type: 'less_than_equal', loc: ['query', 'limit'], msg: 'Input should be less than or equal to 100', input: '101', ctx: { le: 100 } }]);
    const notInt = await server.api('GET', '/v2/listeners?limit=abc');
    assert.deepEqual(notInt.body.detail, [{ type: 'int_parsing', loc: ['query', 'limit'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'abc' }]);
  });
});

describe('listener isolation', () => {
  test('another workspace sees 404 for every path of a listener it does not own, and may use the same compute id', async () => {
    const mine = await create('cluster-shared', server.api, { version: '1' });
    const other = await otherWorkspace(server, 'listeners-other');
    for (const [method, body] of [['GET'], ['PATCH', { version: 'evil' }], ['PATCH', {}], ['DELETE']] as const) {
      const response = await other.api(method, `/v2/listeners/${mine.id}`, body === undefined ? {} : { body });
      assert.equal(response.status, 404, method);
      assert.deepEqual(response.body, { detail: `Listener ID ${mine.id} not found.` });
    }
    assert.deepEqual((await other.api('GET', '/v2/listeners')).body, { resources: [], offset: 0 });
    assert.deepEqual((await server.api('GET', `/v2/listeners/${mine.id}`)).body, mine, 'unchanged');

    const theirs = await create('cluster-shared', other.api);
    assert.notEqual(theirs.id, mine.id);
    assert.deepEqual((await other.api('GET', '/v2/listeners')).body.resources.map((l: any) => l.id), [theirs.id]);
    assert.equal((await server.api('GET', `/v2/listeners/${theirs.id}`)).status, 404);
    assert.equal((await server.api('DELETE', `/v2/listeners/${theirs.id}`)).status, 404);
    assert.equal((await other.api('GET', `/v2/listeners/${theirs.id}`)).status, 200);
  });
});
