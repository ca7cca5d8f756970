import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadGraphConfig, parseDotEnv, GraphConfigError } from '../../../src/modules/agents/graph-config.ts';
import { mountUserApp } from '../../../src/modules/agents/http-app.ts';
import { createHttpServer } from '../../../src/platform/http/server.ts';
import { FIXTURE_DIR } from '../../fixtures/agents/server.ts';

describe('langgraph.json', () => {
  test('graphs as strings or {path, description}, env map, http and store settings', async () => {
    const config = await loadGraphConfig(path.join(FIXTURE_DIR, 'langgraph.json'));
    assert.equal(config.projectDir, FIXTURE_DIR);
    const agent = config.graphs.find((graph) => graph.graphId === 'agent')!;
    assert.equal(agent.file, path.join(FIXTURE_DIR, 'graphs', 'agent.ts'));
    assert.equal(agent.exportName, 'graph');
    assert.equal(agent.description, 'Answers with a canned chat model reply.');
    assert.equal(config.env.BERTH_FIXTURE_GREETING, 'hello from env');
    assert.deepEqual(config.http.app, { file: path.join(FIXTURE_DIR, 'http.ts'), exportName: 'app' });
    assert.deepEqual(config.store.ttl, { defaultTtlMinutes: null, refreshOnRead: true, sweepIntervalMinutes: 60 });
  });

  test('env as a .env file path', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'lgjson-'));
    await writeFile(path.join(dir, '.env'), await (await import('node:fs/promises')).readFile(path.join(FIXTURE_DIR, '.env.fixture'), 'utf8'));
    await writeFile(path.join(dir, 'langgraph.json'), JSON.stringify({ graphs: { g: './g.ts:graph' }, env: '.env' }));
    const config = await loadGraphConfig(path.join(dir, 'langgraph.json'));
    assert.deepEqual(config.env, { FIXTURE_A: 'plain', FIXTURE_B: 'quoted value', FIXTURE_C: 'single' });
    assert.deepEqual(parseDotEnv('X=1\n\n# c\nY = two words # note\n'), { X: '1', Y: 'two words' });
  });

  test('bad configurations are refused with the file named', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'lgjson-'));
    const file = path.join(dir, 'langgraph.json');
    await writeFile(file, '{"graphs": {}}');
    await assert.rejects(loadGraphConfig(file), (error: Error) => error instanceof GraphConfigError && error.message.includes(file));
    await writeFile(file, '{nope');
    await assert.rejects(loadGraphConfig(file), GraphConfigError);
    await assert.rejects(loadGraphConfig(path.join(dir, 'missing.json')), GraphConfigError);
  });
});

describe('http.app', () => {
  test('a Hono app is mounted beside the API, bodies and statuses passed through', async () => {
    const app = await createHttpServer({ logger: pino({ level: 'silent' }), openapi: { title: 't', version: '0', description: '' } });
    await mountUserApp(app, { file: path.join(FIXTURE_DIR, 'hono-app.ts'), exportName: 'app' });
    const hello = await app.inject({ method: 'GET', url: '/hono/hello/ann' });
    assert.equal(hello.statusCode, 200);
    assert.deepEqual(hello.json(), { hello: 'ann' });
    const echo = await app.inject({ method: 'POST', url: '/hono/echo', payload: { a: 1 } });
    assert.equal(echo.statusCode, 201);
    assert.deepEqual(echo.json(), { got: { a: 1 } });
    await assert.rejects(mountUserApp(app, { file: path.join(FIXTURE_DIR, 'hono-app.ts'), exportName: 'missing' }), /missing/);
    await app.close();
  });
});
