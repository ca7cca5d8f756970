// System routes, API keys, the user's own routes, CORS, start-up errors; the store API. Crons: agents.crons.test.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { startAgentServer } from '../../src/agent-server.ts';
import { agentServerForFile, dropStorage, FIXTURE_DIR, newStorage, serverEnv } from '../fixtures/agents/server.ts';

const server = await agentServerForFile();
const { client } = server;

const get = (url: string, headers: Record<string, string> = {}) => fetch(`${server.url}${url}`, { headers });

describe('system and auth', { timeout: 30_000 }, () => {
  test('/ok, /docs and /openapi.json are public; everything else needs a key from BERTH_API_KEY', async () => {
    assert.deepEqual(await (await get('/ok')).json(), { ok: true });
    assert.equal((await get('/docs')).status, 200);
    const spec: any = await (await get('/openapi.json')).json();
    assert.ok(spec.paths['/threads/{thread_id}/runs/wait']);
    const missing = await get('/info');
    assert.equal(missing.status, 401);
    assert.ok((await missing.json() as any).detail);
    assert.equal((await get('/info', { 'x-api-key': 'wrong' })).status, 401);
    const info: any = await (await get('/info', { 'x-api-key': `second_key_${server.storage.apiKey}` })).json();
    assert.equal(info.flags.crons, true);
    assert.equal(info.langgraph_js_version, '1.1.5');
  });

  test('/metrics reports runs by status, queue depth and run latency', async () => {
    await client.runs.wait(null, 'echo', { input: { messages: [] } });
    const text = await (await get('/metrics', { 'x-api-key': server.storage.apiKey })).text();
    assert.match(text, /^berth_agent_queue_depth \d+$/m);
    assert.match(text, /^berth_agent_runs\{status="pending"\} \d+$/m);
    assert.match(text, /^berth_agent_run_duration_seconds_count [1-9]\d*$/m);
  });

  test('the user app from http.app is mounted; CORS follows http.cors', async () => {
    assert.deepEqual(await (await get('/custom/hello')).json(), { hello: 'world' });
    const allowed = await get('/ok', { origin: 'http://example.test' });
    assert.equal(allowed.headers.get('access-control-allow-origin'), 'http://example.test');
    const other = await get('/ok', { origin: 'http://elsewhere.test' });
    assert.equal(other.headers.get('access-control-allow-origin'), null);
  });

  test('a graph that cannot load stops start-up with the file and export named', async () => {
    const storage = await newStorage();
    try {
      await assert.rejects(
        startAgentServer(loadConfig(serverEnv(storage)), { configFile: path.join(FIXTURE_DIR, 'broken.langgraph.json') }),
        (error: Error) => error.message.includes('echo.ts') && error.message.includes('doesNotExist'),
      );
      await assert.rejects(startAgentServer(loadConfig({ ...serverEnv(storage), BERTH_API_KEY: '' }), { configFile: path.join(FIXTURE_DIR, 'langgraph.json') }), /BERTH_API_KEY/);
    } finally {
      await dropStorage(storage);
    }
  });
});

describe('store', { timeout: 30_000 }, () => {
  test('put, get, search with filter and prefix, namespaces, delete; graphs share the store', async () => {
    await client.store.putItem(['users', 'u1'], 'prefs', { theme: 'dark' });
    await client.store.putItem(['users', 'u2'], 'prefs', { theme: 'light' });
    const item = await client.store.getItem(['users', 'u1'], 'prefs');
    assert.deepEqual(item?.value, { theme: 'dark' });
    assert.ok(item?.createdAt || (item as any)?.created_at);
    const found = await client.store.searchItems(['users'], { filter: { theme: 'light' } });
    assert.deepEqual(found.items.map((entry) => entry.namespace), [['users', 'u2']]);
    const namespaces = await client.store.listNamespaces({ prefix: ['users'] });
    assert.deepEqual(namespaces.namespaces, [['users', 'u1'], ['users', 'u2']]);
    await client.store.deleteItem(['users', 'u1'], 'prefs');
    assert.equal(await client.store.getItem(['users', 'u1'], 'prefs'), null);
    const out: any = await client.runs.wait(null, 'custom', { input: { count: 4 } });
    assert.deepEqual(out.remembered, { count: 4 });
    assert.deepEqual((await client.store.getItem(['fixture', 'custom'], 'last'))?.value, { count: 4 });
  });

  test('ttl expires items', async () => {
    await client.store.putItem(['ttl'], 'gone', { v: 1 }, { ttl: 0.0005 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(await client.store.getItem(['ttl'], 'gone'), null);
  });
});
