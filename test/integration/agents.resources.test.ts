// Assistants, threads and thread state through the SDK Client.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { agentServerForFile } from '../fixtures/agents/server.ts';

const server = await agentServerForFile({ env: { LANGGRAPH_CONFIG: JSON.stringify({ factory: { configurable: { who: 'env default' } } }) } });
const { client } = server;

const status = (code: number) => (error: any) => error.status === code;

describe('assistants', { timeout: 30_000 }, () => {
  test('each graph has a system assistant with a deterministic id; graph ids work as assistant ids', async () => {
    const system = await client.assistants.search({ metadata: { created_by: 'system' }, limit: 100 });
    assert.equal(system.length, 9);
    const echo = system.find((assistant) => assistant.graph_id === 'echo')!;
    // uuid5("echo", 6ba7b821-9dad-11d1-80b4-00c04fd430c8), as the official servers compute it
    assert.equal(echo.assistant_id, '046b5dc7-2108-582c-9c6c-31d556d138f0');
    assert.equal((await client.assistants.get('echo')).assistant_id, echo.assistant_id);
    assert.equal(system.find((assistant) => assistant.graph_id === 'agent')!.description, 'Answers with a canned chat model reply.');
    const factory = await client.assistants.get('factory');
    assert.deepEqual(factory.config, { configurable: { who: 'env default' } }, 'LANGGRAPH_CONFIG sets system assistant config');
    const out: any = await client.runs.wait(null, 'factory', { input: {} });
    assert.equal(out.built_for, 'env default', 'factories are built from the run config');
  });

  test('create, get, patch makes versions, latest, versions list, count, search, delete', async () => {
    const created = await client.assistants.create({ graphId: 'factory', name: 'Builder', config: { configurable: { who: 'v1' } }, metadata: { team: 'a' } });
    assert.equal(created.version, 1);
    await assert.rejects(client.assistants.create({ graphId: 'factory', assistantId: created.assistant_id }), status(409));
    const same = await client.assistants.create({ graphId: 'factory', assistantId: created.assistant_id, ifExists: 'do_nothing' });
    assert.equal(same.name, 'Builder');
    const patched = await client.assistants.update(created.assistant_id, { config: { configurable: { who: 'v2' } }, metadata: { extra: 1 } });
    assert.equal(patched.version, 2);
    assert.deepEqual(patched.metadata, { team: 'a', extra: 1 });
    const out: any = await client.runs.wait(null, created.assistant_id, { input: {} });
    assert.equal(out.built_for, 'v2');
    const versions = await client.assistants.getVersions(created.assistant_id);
    assert.deepEqual(versions.map((version) => version.version), [2, 1]);
    const back = await client.assistants.setLatest(created.assistant_id, 1);
    assert.deepEqual(back.config, { configurable: { who: 'v1' } });
    assert.equal((await client.assistants.search({ metadata: { team: 'a' } })).length, 1);
    assert.equal(await client.assistants.count({ graphId: 'factory' }), 2);
    assert.equal(((await client.assistants.search({ name: 'build' } as any)) as unknown as unknown[]).length, 1);
    await client.assistants.delete(created.assistant_id);
    await assert.rejects(client.assistants.get(created.assistant_id), status(404));
    await assert.rejects(client.assistants.create({ graphId: 'no-such-graph' }), status(404));
  });

  test('graph drawing and schemas', async () => {
    const graph: any = await client.assistants.getGraph('nested');
    const ids = graph.nodes.map((node: any) => node.id);
    for (const id of ['__start__', 'before', 'child', '__end__']) assert.ok(ids.includes(id), id);
    const schemas = await client.assistants.getSchemas('echo');
    assert.equal(schemas.graph_id, 'echo');
    assert.deepEqual(Object.keys((schemas.state_schema as any).properties), ['messages']);
    const subgraphs = await client.assistants.getSubgraphs('nested');
    assert.deepEqual(Object.keys(subgraphs), ['child']);
  });

  test('pagination headers on search', async () => {
    const response = await fetch(`${server.url}/assistants/search`, {
      method: 'POST', headers: { 'x-api-key': server.storage.apiKey, 'content-type': 'application/json' }, body: JSON.stringify({ limit: 2 }),
    });
    assert.equal(response.headers.get('x-pagination-next'), '2');
    assert.ok(Number(response.headers.get('x-pagination-total')) >= 9);
  });
});

describe('threads', { timeout: 30_000 }, () => {
  test('create (if_exists), get, patch merges metadata, search, count, delete', async () => {
    const thread = await client.threads.create({ metadata: { owner: 'ann' } });
    assert.equal(thread.status, 'idle');
    await assert.rejects(client.threads.create({ threadId: thread.thread_id }), status(409));
    assert.equal((await client.threads.create({ threadId: thread.thread_id, ifExists: 'do_nothing' })).thread_id, thread.thread_id);
    const patched = await client.threads.update(thread.thread_id, { metadata: { topic: 'x' } });
    assert.deepEqual(patched.metadata, { owner: 'ann', topic: 'x' });
    assert.equal((await client.threads.search({ metadata: { owner: 'ann' } })).length, 1);
    assert.equal(await client.threads.count({ metadata: { owner: 'ann' } }), 1);
    assert.equal((await client.threads.search({ status: 'busy', metadata: { owner: 'ann' } })).length, 0);
    await client.threads.delete(thread.thread_id);
    await assert.rejects(client.threads.get(thread.thread_id), status(404));
    await assert.rejects(client.threads.get('not-a-uuid'), status(422));
  });

  test('search and count by values find small values and large (packed) ones alike; get and copy return them whole', async () => {
    const suite = crypto.randomUUID();
    const big = `big-${suite}-${'x'.repeat(6000)}`;
    const small = `small-${suite}`;
    const [bigThread, smallThread] = await Promise.all([big, small].map(async (content) => {
      const thread = await client.threads.create({ metadata: { suite } });
      await client.runs.wait(thread.thread_id, 'echo', { input: { messages: [{ role: 'user', content }] } });
      return thread;
    }));
    const stored = await server.running.db.query<{ thread_id: string; packed: boolean }>(
      'SELECT thread_id, values_packed IS NOT NULL AS packed FROM agent_threads WHERE thread_id = ANY($1::uuid[])', [[bigThread!.thread_id, smallThread!.thread_id]]);
    assert.deepEqual(Object.fromEntries(stored.map((row) => [row.thread_id, row.packed])), { [bigThread!.thread_id]: true, [smallThread!.thread_id]: false });
    const ids = (threads: { thread_id: string }[]) => threads.map((thread) => thread.thread_id).sort();
    assert.deepEqual(ids(await client.threads.search({ values: { messages: [{ content: big }] } })), [bigThread!.thread_id]);
    assert.deepEqual(ids(await client.threads.search({ values: { messages: [{ content: small }] } })), [smallThread!.thread_id]);
    assert.equal(await client.threads.count({ values: { messages: [{ content: big }] } }), 1);
    assert.equal(await client.threads.count({ values: { messages: [{ content: 'nobody said this' }] } }), 0);
    const both = { metadata: { suite }, values: { messages: [{ type: 'ai' }] } };
    assert.deepEqual(ids(await client.threads.search(both)), ids([bigThread!, smallThread!]));
    assert.equal(await client.threads.count(both), 2);
    const pages = [...await client.threads.search({ ...both, limit: 1 }), ...await client.threads.search({ ...both, limit: 1, offset: 1 })];
    assert.deepEqual(ids(pages), ids([bigThread!, smallThread!]), 'pages of a values search');
    assert.equal(((await client.threads.get(bigThread!.thread_id)).values as any).messages[0].content, big);
    const copy = await client.threads.copy(bigThread!.thread_id);
    assert.equal(((await client.threads.get(copy.thread_id)).values as any).messages[0].content, big);
  });

  test('state, update_state with as_node, history with before and metadata filter, state at a checkpoint', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'echo', { input: { messages: [{ role: 'user', content: 'one' }] } });
    const state = await client.threads.getState(thread.thread_id);
    assert.equal((state.values as any).messages.length, 2);
    assert.deepEqual(state.next, []);
    const update: any = await client.threads.updateState(thread.thread_id, { values: { messages: [{ role: 'user', content: 'edited' }] }, asNode: 'reply' });
    assert.ok(update.checkpoint.checkpoint_id);
    const after = await client.threads.getState(thread.thread_id);
    assert.equal((after.values as any).messages.length, 3);
    assert.equal((after.metadata as any).source, 'update');
    const history = await client.threads.getHistory(thread.thread_id, { limit: 10 });
    assert.ok(history.length >= 3);
    assert.equal(history[0]!.checkpoint.checkpoint_id, update.checkpoint.checkpoint_id, 'newest first');
    const older = await client.threads.getHistory(thread.thread_id, { before: history[0]!.checkpoint as any, limit: 1 });
    assert.equal(older[0]!.checkpoint.checkpoint_id, history[1]!.checkpoint.checkpoint_id);
    const inputs = await client.threads.getHistory(thread.thread_id, { metadata: { source: 'input' } });
    assert.ok(inputs.length >= 1 && inputs.every((entry) => (entry.metadata as any).source === 'input'));
    const atFirst = await client.threads.getState(thread.thread_id, history.at(-1)!.checkpoint.checkpoint_id!);
    assert.equal(atFirst.checkpoint.checkpoint_id, history.at(-1)!.checkpoint.checkpoint_id);
  });

  test('copy keeps state; prune deletes; supersteps build state at creation', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'echo', { input: { messages: [{ role: 'user', content: 'one' }] } });
    const copy = await client.threads.copy(thread.thread_id);
    assert.notEqual(copy.thread_id, thread.thread_id);
    assert.equal(((await client.threads.getState(copy.thread_id)).values as any).messages.length, 2);
    // threads.prune is newer than the pinned SDK: the same request by hand
    const response = await fetch(`${server.url}/threads/prune`, {
      method: 'POST', headers: { 'x-api-key': server.storage.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ thread_ids: [copy.thread_id], strategy: 'delete' }),
    });
    assert.deepEqual(await response.json(), { pruned_count: 1 });
    await assert.rejects(client.threads.get(copy.thread_id), status(404));
    const seeded = await client.threads.create({
      graphId: 'echo',
      supersteps: [{ updates: [{ values: { messages: [{ role: 'user', content: 'seed' }] }, asNode: 'reply' }] }, { updates: [{ values: { messages: [{ role: 'ai', content: 'seeded' }] }, asNode: 'reply' }] }],
    } as any);
    const seededState = await client.threads.getState(seeded.thread_id);
    assert.deepEqual((seededState.values as any).messages.map((message: any) => message.content), ['seed', 'seeded']);
  });
});
