// What the public conformance suite (@langchain/langgraph-checkpoint-validation) checks, against Berth's saver.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyCheckpoint, uuid6, type Checkpoint } from '@langchain/langgraph-checkpoint';
import { Annotation, END, START, StateGraph, interrupt, Command } from '@langchain/langgraph';
import { openDb, migrate, type Db } from '../../../src/platform/db/index.ts';
import { DbCheckpointSaver, insertRowsCtes, latestCheckpointSql } from '../../../src/modules/agents/checkpointer.ts';

const INTERRUPT = '__interrupt__';
let db: Db;
let saver: DbCheckpointSaver;

before(async () => {
  db = await openDb({ databaseUrl: undefined, databaseSchema: 'public', pgliteDir: 'memory://' });
  await migrate(db);
  saver = new DbCheckpointSaver(db);
});
after(() => db.close());

function checkpoint(values: Record<string, unknown> = {}): Checkpoint {
  return { ...emptyCheckpoint(), id: uuid6(-1), channel_values: values, channel_versions: Object.fromEntries(Object.keys(values).map((k) => [k, 1])) };
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe('DbCheckpointSaver', () => {
  test('put then getTuple returns the checkpoint, metadata and parent', async () => {
    const thread = `t-${uuid6(-1)}`;
    const first = checkpoint({ a: 1 });
    const firstConfig = await saver.put({ configurable: { thread_id: thread, checkpoint_ns: '' } }, first, { source: 'input', step: -1, parents: {} }, {});
    assert.deepEqual(firstConfig, { configurable: { thread_id: thread, checkpoint_ns: '', checkpoint_id: first.id } });
    const second = checkpoint({ a: 2, b: 'x' });
    await saver.put(firstConfig, second, { source: 'loop', step: 0, parents: {}, run_id: 'r1' } as any, {});

    const latest = await saver.getTuple({ configurable: { thread_id: thread } });
    assert.equal(latest?.checkpoint.id, second.id);
    assert.deepEqual(latest?.checkpoint.channel_values, { a: 2, b: 'x' });
    assert.deepEqual(latest?.metadata, { source: 'loop', step: 0, parents: {}, run_id: 'r1' });
    assert.equal(latest?.parentConfig?.configurable?.checkpoint_id, first.id);

    const exact = await saver.getTuple({ configurable: { thread_id: thread, checkpoint_id: first.id } });
    assert.deepEqual(exact?.checkpoint.channel_values, { a: 1 });
    assert.equal(exact?.parentConfig, undefined);
    assert.equal(await saver.getTuple({ configurable: { thread_id: 'missing' } }), undefined);
    assert.equal(await saver.getTuple({ configurable: { thread_id: thread, checkpoint_id: 'nope' } }), undefined);
  });

  test('list filters by metadata, honours before and limit, newest first', async () => {
    const thread = `t-${uuid6(-1)}`;
    const ids: string[] = [];
    let config: any = { configurable: { thread_id: thread, checkpoint_ns: '' } };
    for (let step = 0; step < 4; step++) {
      const cp = checkpoint({ step });
      ids.push(cp.id);
      config = await saver.put(config, cp, { source: step % 2 ? 'loop' : 'update', step, parents: {} }, {});
    }
    const all = await collect(saver.list({ configurable: { thread_id: thread } }));
    assert.deepEqual(all.map((t) => t.checkpoint.id), [...ids].reverse());
    const loops = await collect(saver.list({ configurable: { thread_id: thread } }, { filter: { source: 'loop' } }));
    assert.deepEqual(loops.map((t) => t.metadata?.step), [3, 1]);
    const beforeThird = await collect(saver.list({ configurable: { thread_id: thread } }, { before: { configurable: { checkpoint_id: ids[2] } } }));
    assert.deepEqual(beforeThird.map((t) => t.checkpoint.id), [ids[1], ids[0]]);
    const limited = await collect(saver.list({ configurable: { thread_id: thread } }, { limit: 1 }));
    assert.deepEqual(limited.map((t) => t.checkpoint.id), [ids[3]]);
    const none = await collect(saver.list({ configurable: { thread_id: thread } }, { filter: { source: 'fork' } }));
    assert.equal(none.length, 0);
  });

  test('pending writes: stored per task, first write kept for ordinary channels, special channels replaced', async () => {
    const thread = `t-${uuid6(-1)}`;
    const cp = checkpoint();
    const config = await saver.put({ configurable: { thread_id: thread, checkpoint_ns: '' } }, cp, { source: 'loop', step: 0, parents: {} }, {});
    await saver.putWrites(config, [['a', 1], ['b', { deep: [1, 2] }]], 'task1');
    await saver.putWrites(config, [['a', 99]], 'task1');
    await saver.putWrites(config, [['__error__', 'first']], 'task2');
    await saver.putWrites(config, [['__error__', 'second']], 'task2');
    const tuple = await saver.getTuple(config);
    assert.deepEqual(tuple?.pendingWrites, [['task1', 'a', 1], ['task1', 'b', { deep: [1, 2] }], ['task2', '__error__', 'second']]);
  });

  test('namespaces are separate', async () => {
    const thread = `t-${uuid6(-1)}`;
    const root = checkpoint({ where: 'root' });
    const child = checkpoint({ where: 'child' });
    await saver.put({ configurable: { thread_id: thread, checkpoint_ns: '' } }, root, { source: 'loop', step: 0, parents: {} }, {});
    await saver.put({ configurable: { thread_id: thread, checkpoint_ns: 'child:1' } }, child, { source: 'loop', step: 0, parents: { '': root.id } }, {});
    assert.deepEqual((await saver.getTuple({ configurable: { thread_id: thread } }))?.checkpoint.channel_values, { where: 'root' });
    assert.deepEqual((await saver.getTuple({ configurable: { thread_id: thread, checkpoint_ns: 'child:1' } }))?.checkpoint.channel_values, { where: 'child' });
    assert.equal((await collect(saver.list({ configurable: { thread_id: thread } }))).length, 2);
    assert.equal((await collect(saver.list({ configurable: { thread_id: thread, checkpoint_ns: 'child:1' } }))).length, 1);
  });

  test('deleteThread removes checkpoints and writes of that thread only', async () => {
    const keep = `t-${uuid6(-1)}`;
    const gone = `t-${uuid6(-1)}`;
    for (const thread of [keep, gone]) {
      const config = await saver.put({ configurable: { thread_id: thread, checkpoint_ns: '' } }, checkpoint({ x: 1 }), { source: 'loop', step: 0, parents: {} }, {});
      await saver.putWrites(config, [['x', 2]], 'task');
    }
    await saver.deleteThread(gone);
    assert.equal(await saver.getTuple({ configurable: { thread_id: gone } }), undefined);
    assert.equal((await db.query(`SELECT 1 FROM agent_checkpoint_writes WHERE thread_id = $1`, [gone])).length, 0);
    assert.ok(await saver.getTuple({ configurable: { thread_id: keep } }));
  });

  test('large values are stored compressed and read back whole; small ones stay readable JSON', async () => {
    const thread = `t-${uuid6(-1)}`;
    const big = checkpoint({ log: Array.from({ length: 2000 }, (_, i) => `entry ${i}`) });
    const config = await saver.put({ configurable: { thread_id: thread, checkpoint_ns: '' } }, big, { source: 'loop', step: 0, parents: {} }, {});
    await saver.putWrites(config, [['log', Array.from({ length: 1000 }, (_, i) => `write ${i}`)], ['small', 'x']], 'task-1');
    const rows = await db.query<{ type: string; checkpoint: string }>('SELECT type, checkpoint FROM agent_checkpoints WHERE thread_id = $1', [thread]);
    assert.equal(rows[0]!.type, 'json+zstd');
    assert.ok(rows[0]!.checkpoint.length < JSON.stringify(big).length / 4, 'compressed');
    const writes = await db.query<{ channel: string; type: string; value: string }>('SELECT channel, type, value FROM agent_checkpoint_writes WHERE thread_id = $1 ORDER BY idx', [thread]);
    assert.deepEqual(writes.map((w) => [w.channel, w.type]), [['log', 'json+zstd'], ['small', 'json']]);
    assert.equal(writes[1]!.value, '"x"');
    const tuple = await saver.getTuple({ configurable: { thread_id: thread } });
    assert.deepEqual(tuple?.checkpoint.channel_values, big.channel_values);
    assert.deepEqual(tuple?.pendingWrites?.map(([, channel, value]) => [channel, Array.isArray(value) ? value.length : value]), [['log', 1000], ['small', 'x']]);
  });

  test('a primed first read answers the run\'s first root read once; other reads go to the database', async () => {
    const thread = `t-${uuid6(-1)}`;
    const stored = checkpoint({ a: 1 });
    await saver.put({ configurable: { thread_id: thread, checkpoint_ns: '' } }, stored, { source: 'loop', step: 0, parents: {} }, {});
    const [row] = await db.query<any>(`SELECT ${latestCheckpointSql('$1')} AS latest`, [thread]);
    assert.equal(row.latest.checkpoint_id, stored.id);
    saver.prime('run-1', thread, null);
    // Another run, another namespace or a pinned checkpoint do not take it.
    assert.equal((await saver.getTuple({ configurable: { thread_id: thread, run_id: 'run-2' } }))?.checkpoint.id, stored.id);
    assert.equal((await saver.getTuple({ configurable: { thread_id: thread, run_id: 'run-1', checkpoint_id: stored.id } }))?.checkpoint.id, stored.id);
    assert.equal(await saver.getTuple({ configurable: { thread_id: thread, run_id: 'run-1' } }), undefined, 'answered from the prime');
    assert.equal((await saver.getTuple({ configurable: { thread_id: thread, run_id: 'run-1' } }))?.checkpoint.id, stored.id, 'once');
    saver.prime('run-3', thread, row.latest);
    const primed = await saver.getTuple({ configurable: { thread_id: thread, run_id: 'run-3' } });
    assert.deepEqual(primed?.checkpoint.channel_values, { a: 1 });
    saver.prime('run-4', thread, null);
    saver.forget('run-4');
    assert.equal((await saver.getTuple({ configurable: { thread_id: thread, run_id: 'run-4' } }))?.checkpoint.id, stored.id);
  });

  test('a holding run\'s checkpoints and writes are held together; reads, the timer and forget write them; release hands them over', async () => {
    const thread = `t-${uuid6(-1)}`;
    const stored = async () => (await db.query<{ checkpoint_id: string }>('SELECT checkpoint_id FROM agent_checkpoints WHERE thread_id = $1 ORDER BY checkpoint_id', [thread])).map((row) => row.checkpoint_id);
    const storedWrites = async () => (await db.query<{ channel: string; value: string }>('SELECT channel, value FROM agent_checkpoint_writes WHERE thread_id = $1 ORDER BY checkpoint_id, task_id, idx', [thread])).map((row) => `${row.channel}=${row.value}`);
    const config = { configurable: { thread_id: thread, checkpoint_ns: '', run_id: 'run-h' } };
    saver.holdCheckpoints('run-h');
    const first = checkpoint({ a: 1 });
    const firstConfig = await saver.put(config, first, { source: 'input', step: -1, parents: {} }, {});
    await saver.putWrites({ configurable: { ...firstConfig.configurable, run_id: 'run-h' } }, [['a', 'kept'], [INTERRUPT, 'first']], 'task-1');
    // The same keys again: an ordinary write keeps the first value, a special channel takes the last.
    await saver.putWrites({ configurable: { ...firstConfig.configurable, run_id: 'run-h' } }, [['a', 'ignored']], 'task-1');
    await saver.putWrites({ configurable: { ...firstConfig.configurable, run_id: 'run-h' } }, [[INTERRUPT, 'second']], 'task-1');
    const second = checkpoint({ a: 2 });
    await saver.put({ configurable: { ...config.configurable, checkpoint_id: first.id } }, second, { source: 'loop', step: 0, parents: {} }, {});
    assert.deepEqual(await stored(), [], 'held');
    assert.deepEqual(await storedWrites(), []);
    // Another run's reads of the thread see what is held (it is written first).
    const read = await saver.getTuple({ configurable: { thread_id: thread, checkpoint_id: first.id } });
    assert.deepEqual(read?.pendingWrites?.map(([, channel, value]) => `${channel}=${value}`), [`${INTERRUPT}=second`, 'a=kept']);
    assert.deepEqual(await stored(), [first.id, second.id]);
    const third = checkpoint({ a: 3 });
    await saver.put({ configurable: { ...config.configurable, checkpoint_id: second.id } }, third, { source: 'loop', step: 1, parents: {} }, {});
    const fourth = checkpoint({ a: 4 });
    await saver.put({ configurable: { ...config.configurable, checkpoint_id: third.id } }, fourth, { source: 'loop', step: 2, parents: {} }, {});
    const held = await saver.releaseHeld('run-h');
    assert.equal(JSON.parse(held![0]!).map((row: { checkpoint_id: string }) => row.checkpoint_id).join(), [third.id, fourth.id].join(), 'what is held is handed over');
    assert.equal(held![1], null, 'no writes held');
    assert.deepEqual(await stored(), [first.id, second.id]);
    await db.query(`WITH ${insertRowsCtes('$1', '$2')} SELECT 1`, held);
    assert.deepEqual((await saver.getTuple({ configurable: { thread_id: thread } }))?.checkpoint.channel_values, { a: 4 });
    assert.equal((await saver.getTuple({ configurable: { thread_id: thread } }))?.parentConfig?.configurable?.checkpoint_id, third.id);

    saver.holdCheckpoints('run-t');
    const timed = checkpoint({ b: 1 });
    await saver.put({ configurable: { thread_id: thread, checkpoint_ns: '', run_id: 'run-t' } }, timed, { source: 'loop', step: 3, parents: {} }, {});
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.ok((await stored()).includes(timed.id), 'written when the run does not end within the hold');
    saver.holdCheckpoints('run-s');
    const last = checkpoint({ c: 1 });
    await saver.put({ configurable: { thread_id: thread, checkpoint_ns: '', run_id: 'run-s' } }, last, { source: 'loop', step: 4, parents: {} }, {});
    await saver.forget('run-s');
    assert.ok((await stored()).includes(last.id), 'forgetting the run writes it');
  });

  test('a real graph interrupts and resumes through the saver', async () => {
    const State = Annotation.Root({ answer: Annotation<string>(), log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
    const graph = new StateGraph(State)
      .addNode('ask', () => ({ answer: interrupt('what?') as string, log: ['asked'] }))
      .addNode('done', (state) => ({ log: [`got ${state.answer}`] }))
      .addEdge(START, 'ask').addEdge('ask', 'done').addEdge('done', END)
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: `t-${uuid6(-1)}` } };
    const first = await graph.invoke({ log: [] }, config);
    assert.ok((first as Record<string, unknown>).__interrupt__);
    const state = await graph.getState(config);
    assert.deepEqual(state.next, ['ask']);
    const final = await graph.invoke(new Command({ resume: 'blue' }), config);
    assert.deepEqual(final.log, ['asked', 'got blue']);
    const history = await collect(graph.getStateHistory(config));
    assert.ok(history.length >= 4);
  });
});
