// Thread runs and stateless runs through the SDK Client: wait, stream modes, interrupts, errors,
// cancellation, multitask strategies, join, resumable streams.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { agentServerForFile, pollUntil } from '../fixtures/agents/server.ts';

const server = await agentServerForFile();
const { client } = server;

const human = (content: string) => ({ messages: [{ role: 'user', content }] });

async function collect(stream: AsyncIterable<{ event: string; data: any }>) {
  const events: { event: string; data: any }[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('runs', { timeout: 30_000 }, () => {
  test('wait on a thread returns the final values; the thread keeps them and goes idle', async () => {
    const thread = await client.threads.create();
    const first: any = await client.runs.wait(thread.thread_id, 'echo', { input: human('hi') });
    assert.equal(first.messages.length, 2);
    assert.equal(first.messages[1].type, 'ai');
    assert.equal(first.messages[1].content, 'hello from env #1', 'langgraph.json env reaches the graph');
    const second: any = await client.runs.wait(thread.thread_id, 'echo', { input: human('again') });
    assert.equal(second.messages.length, 4);
    const stored = await client.threads.get(thread.thread_id);
    assert.equal(stored.status, 'idle');
    assert.equal((stored.values as any).messages.length, 4);
    assert.equal(stored.metadata?.graph_id, 'echo');
    const runs = await client.runs.list(thread.thread_id);
    assert.equal(runs.length, 2);
    assert.ok(runs.every((run) => run.status === 'success'));
  });

  test('stream: metadata first, values, updates, messages-tuple and custom events', async () => {
    const thread = await client.threads.create();
    const events = await collect(client.runs.stream(thread.thread_id, 'agent', { input: human('yo'), streamMode: ['values', 'updates', 'messages-tuple'] }));
    assert.equal(events[0]!.event, 'metadata');
    assert.ok(events[0]!.data.run_id);
    const names = new Set(events.map((event) => event.event));
    for (const name of ['values', 'updates', 'messages']) assert.ok(names.has(name), `has ${name}`);
    const tokens = events.filter((event) => event.event === 'messages').map((event) => event.data[0].content).join('');
    assert.equal(tokens, 'Hello there, friend');
    assert.deepEqual(Object.keys(events.find((event) => event.event === 'updates')!.data), ['model']);
    const custom = await collect(client.runs.stream(null, 'custom', { input: { count: 3 }, streamMode: ['custom'] }));
    assert.deepEqual(custom.filter((event) => event.event === 'custom').map((event) => event.data), [{ progress: 0 }, { progress: 1 }, { progress: 2 }]);
  });

  test('messages mode streams partial and complete messages; events mode streams callbacks', async () => {
    const events = await collect(client.runs.stream(null, 'agent', { input: human('yo'), streamMode: ['messages', 'events'] }));
    const names = events.map((event) => event.event);
    assert.ok(names.includes('messages/metadata'));
    assert.ok(names.includes('messages/partial'));
    assert.ok(names.includes('messages/complete'));
    const partial = events.filter((event) => event.event === 'messages/partial').at(-1)!;
    assert.equal(partial.data[0].content, 'Hello there, friend');
    assert.ok(events.some((event) => event.event === 'events' && event.data.event === 'on_chat_model_stream'));
  });

  test('debug, tasks and checkpoints modes carry checkpoint ids and task results', async () => {
    const thread = await client.threads.create();
    const events = await collect(client.runs.stream(thread.thread_id, 'echo', { input: human('x'), streamMode: ['debug', 'tasks', 'checkpoints'] as any }));
    const checkpoints = events.filter((event) => event.event === 'checkpoints');
    assert.ok(checkpoints.length >= 2);
    assert.equal(checkpoints.at(-1)!.data.checkpoint.thread_id, thread.thread_id);
    assert.equal(checkpoints.at(-1)!.data.parent_checkpoint.checkpoint_id, checkpoints.at(-2)!.data.checkpoint.checkpoint_id);
    assert.deepEqual(checkpoints.at(-1)!.data.next, []);
    const result = events.find((event) => event.event === 'tasks' && event.data.result);
    assert.equal(result!.data.name, 'reply');
    assert.ok(events.some((event) => event.event === 'debug' && event.data.type === 'checkpoint' && event.data.payload.checkpoint));
    const state = await client.threads.getState(thread.thread_id);
    assert.equal(state.checkpoint.checkpoint_id, checkpoints.at(-1)!.data.checkpoint.checkpoint_id);
  });

  test('subgraph events are namespaced with stream_subgraphs', async () => {
    const events = await collect(client.runs.stream(null, 'nested', { input: { items: [] }, streamMode: ['updates'], streamSubgraphs: true }));
    assert.ok(events.some((event) => event.event === 'updates'));
    assert.ok(events.some((event) => /^updates\|child:/.test(event.event)), events.map((event) => event.event).join(','));
  });

  test('a failing graph streams an error event, wait raises it, the thread shows error', async () => {
    const thread = await client.threads.create();
    const events = await collect(client.runs.stream(thread.thread_id, 'failing', { input: {} }));
    const error = events.find((event) => event.event === 'error');
    assert.deepEqual(error?.data, { error: 'FixtureError', message: 'the node failed on purpose' });
    assert.equal((await client.threads.get(thread.thread_id)).status, 'error');
    await assert.rejects(client.runs.wait(null, 'failing', { input: {} }), /the node failed on purpose/);
    const [run] = await client.runs.list(thread.thread_id);
    assert.equal(run!.status, 'error');
  });

  test('interrupt, then resume with a command', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'ask', { input: { question: 'favourite color?' } });
    const interrupted = await client.threads.get(thread.thread_id);
    assert.equal(interrupted.status, 'interrupted');
    const [taskInterrupts] = Object.values(interrupted.interrupts) as any[];
    assert.deepEqual(taskInterrupts[0].value, { question: 'favourite color?' });
    const state = await client.threads.getState(thread.thread_id);
    assert.deepEqual(state.next, ['ask']);
    assert.equal((state.tasks[0] as any).interrupts[0].value.question, 'favourite color?');
    const done: any = await client.runs.wait(thread.thread_id, 'ask', { command: { resume: 'blue' } });
    assert.deepEqual(done.log, ['asked', 'answer: blue']);
    assert.equal((await client.threads.get(thread.thread_id)).status, 'idle');
  });

  test('interrupt_before stops before a node; a run with null input continues', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'nested', { input: { items: [] }, interruptBefore: ['child'] });
    const state = await client.threads.getState(thread.thread_id);
    assert.deepEqual(state.next, ['child']);
    assert.equal((await client.threads.get(thread.thread_id)).status, 'interrupted');
    const done: any = await client.runs.wait(thread.thread_id, 'nested', { input: null });
    assert.ok(done.items.includes('inner'));
    assert.deepEqual((await client.threads.getState(thread.thread_id)).next, []);
  });

  test('stateless runs: temporary thread deleted unless on_completion keep; batch', async () => {
    const out: any = await client.runs.wait(null, 'echo', { input: human('x') });
    assert.equal(out.messages.length, 2);
    const before = await client.threads.count({ metadata: { graph_id: 'echo' } });
    await client.runs.wait(null, 'echo', { input: human('x') });
    assert.equal(await client.threads.count({ metadata: { graph_id: 'echo' } }), before, 'the temporary thread is gone');
    const ids = async () => new Set((await client.threads.search({ metadata: { graph_id: 'echo' }, limit: 1000 })).map((t) => t.thread_id));
    const known = await ids();
    await client.runs.wait(null, 'echo', { input: human('x'), onCompletion: 'keep' } as any);
    const added = [...(await ids())].filter((id) => !known.has(id));
    assert.equal(added.length, 1, 'the kept thread remains');
    const thread = await client.threads.get(added[0]!);
    assert.equal(thread!.status, 'idle');
    assert.equal((thread!.values as any).messages.length, 2);
    const batch = await client.runs.createBatch([{ assistantId: 'echo', input: human('a') }, { assistantId: 'echo', input: human('b') }] as any);
    assert.equal(batch.length, 2);
  });

  test('background run, join, get, list filter, delete', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'echo', { input: human('bg'), metadata: { tag: 'x' } });
    assert.ok(['pending', 'running'].includes(run.status), 'a run that can start at once starts in the process that queued it');
    const joined: any = await client.runs.join(thread.thread_id, run.run_id);
    assert.equal(joined.messages.length, 2);
    const fetched = await client.runs.get(thread.thread_id, run.run_id);
    assert.equal(fetched.status, 'success');
    assert.deepEqual(fetched.metadata, { tag: 'x' });
    assert.equal((await client.runs.list(thread.thread_id, { status: 'success' })).length, 1);
    assert.equal((await client.runs.list(thread.thread_id, { status: 'error' })).length, 0);
    await client.runs.delete(thread.thread_id, run.run_id);
    await assert.rejects(client.runs.get(thread.thread_id, run.run_id), /404/);
  });

  test('cancel a running run (interrupt, wait): status interrupted, thread idle, first step kept', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'slow', { input: { ms: 400 } });
    await pollUntil(() => client.runs.get(thread.thread_id, run.run_id), (r) => r.status === 'running');
    await pollUntil(() => client.threads.getState(thread.thread_id), (s: any) => (s.values.steps ?? []).includes('first'));
    await client.runs.cancel(thread.thread_id, run.run_id, true, 'interrupt');
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'interrupted');
    const state: any = await client.threads.getState(thread.thread_id);
    assert.deepEqual(state.values.steps, ['first']);
    assert.notEqual((await client.threads.get(thread.thread_id)).status, 'busy');
  });

  test('bulk cancel: pending runs end at once, running ones are interrupted; a stream disconnect can cancel', async () => {
    const thread = await client.threads.create();
    const running = await client.runs.create(thread.thread_id, 'slow', { input: { ms: 2000 } });
    const queued = await client.runs.create(thread.thread_id, 'slow', { input: { ms: 1 }, multitaskStrategy: 'enqueue' });
    await pollUntil(() => client.runs.get(thread.thread_id, running.run_id), (run) => run.status === 'running');
    // bulk cancel is newer than the pinned SDK: the same request by hand
    const response = await fetch(`${server.url}/runs/cancel?action=interrupt`, {
      method: 'POST', headers: { 'x-api-key': server.storage.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ thread_id: thread.thread_id, status: 'all' }),
    });
    assert.equal(response.status, 204);
    await pollUntil(() => client.runs.get(thread.thread_id, running.run_id), (run) => run.status === 'interrupted');
    assert.equal((await client.runs.get(thread.thread_id, queued.run_id)).status, 'interrupted');
    await pollUntil(() => client.threads.get(thread.thread_id), (t) => t.status !== 'busy');

    const other = await client.threads.create();
    const controller = new AbortController();
    let runId: string | undefined;
    const stream = client.runs.stream(other.thread_id, 'slow', { input: { ms: 3000 }, onDisconnect: 'cancel', signal: controller.signal, onRunCreated: (meta: any) => { runId = meta.run_id; } });
    try {
      for await (const event of stream) if (event.event === 'metadata') controller.abort();
    } catch {
      // the SDK may end the iteration or throw on abort
    }
    await pollUntil(() => client.runs.get(other.thread_id, runId!), (run) => run.status === 'interrupted');
  });

  test('concurrent runs on one idle thread: exactly one is accepted, the others rejected', async () => {
    const thread = await client.threads.create();
    const outcomes = await Promise.allSettled(Array.from({ length: 6 }, () => client.runs.create(thread.thread_id, 'slow', { input: { ms: 100 } })));
    const accepted = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const rejected = outcomes.filter((outcome) => outcome.status === 'rejected') as PromiseRejectedResult[];
    assert.equal(accepted.length, 1);
    assert.ok(rejected.every((outcome) => outcome.reason.status === 422));
    await client.runs.join(thread.thread_id, (accepted[0] as PromiseFulfilledResult<any>).value.run_id);
    assert.equal((await client.runs.list(thread.thread_id)).length, 1);
  });

  test('multitask reject answers 422; enqueue runs strictly after', async () => {
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, 'slow', { input: { ms: 200 } });
    await assert.rejects(client.runs.create(thread.thread_id, 'slow', { input: { ms: 1 } }), (error: any) =>
      error.status === 422 && /Thread is already running a task/.test(error.message));
    assert.equal((await client.threads.get(thread.thread_id)).status, 'busy');
    const second = await client.runs.create(thread.thread_id, 'slow', { input: { ms: 1 }, multitaskStrategy: 'enqueue' });
    await client.runs.join(thread.thread_id, second.run_id);
    const a = await client.runs.get(thread.thread_id, first.run_id);
    const b = await client.runs.get(thread.thread_id, second.run_id);
    assert.equal(a.status, 'success');
    assert.equal(b.status, 'success');
    assert.ok(a.updated_at <= b.updated_at);
    const state: any = await client.threads.getState(thread.thread_id);
    assert.deepEqual(state.values.steps, ['first', 'second', 'first', 'second']);
  });

  test('multitask interrupt cancels the running run and keeps its checkpoints; rollback deletes the run and its work', async () => {
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, 'slow', { input: { ms: 300 } });
    await pollUntil(() => client.threads.getState(thread.thread_id), (s: any) => (s.values.steps ?? []).includes('first'));
    const second = await client.runs.create(thread.thread_id, 'slow', { input: { ms: 1 }, multitaskStrategy: 'interrupt' });
    await client.runs.join(thread.thread_id, second.run_id);
    assert.equal((await client.runs.get(thread.thread_id, first.run_id)).status, 'interrupted');
    const kept: any = await client.threads.getState(thread.thread_id);
    assert.deepEqual(kept.values.steps, ['first', 'first', 'second']);

    const other = await client.threads.create();
    const doomed = await client.runs.create(other.thread_id, 'slow', { input: { ms: 300 } });
    await pollUntil(() => client.threads.getState(other.thread_id), (s: any) => (s.values.steps ?? []).includes('first'));
    const winner = await client.runs.create(other.thread_id, 'slow', { input: { ms: 1 }, multitaskStrategy: 'rollback' });
    await client.runs.join(other.thread_id, winner.run_id);
    await assert.rejects(client.runs.get(other.thread_id, doomed.run_id), /404/);
    const state: any = await client.threads.getState(other.thread_id);
    assert.deepEqual(state.values.steps, ['first', 'second'], 'the rolled-back run left no checkpoint behind');
  });

  test('resumable stream: join after the end replays everything, Last-Event-ID replays the rest', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'nested', { input: { items: [] }, streamMode: ['values', 'updates'], streamResumable: true });
    await client.runs.join(thread.thread_id, run.run_id);
    const all = await collect(client.runs.joinStream(thread.thread_id, run.run_id) as any);
    assert.equal(all[0]!.event, 'metadata');
    assert.ok(all.filter((event) => event.event === 'values').length >= 2);
    const response = await fetch(`${server.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream`, {
      headers: { 'x-api-key': server.storage.apiKey, 'last-event-id': '1' },
    });
    const text = await response.text();
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
    assert.deepEqual(ids, Array.from({ length: all.length - 2 }, (_, index) => index + 2));
  });

  test('thread join-stream carries the events of each run on the thread', async () => {
    const thread = await client.threads.create();
    const controller = new AbortController();
    const seen: string[] = [];
    const joined = (async () => {
      try {
        for await (const event of client.threads.joinStream(thread.thread_id, { signal: controller.signal } as any)) {
          if (event.event === 'metadata') seen.push((event.data as any).run_id);
          if (seen.length === 2) controller.abort();
        }
      } catch {
        // aborted
      }
    })();
    // Runs made before the stream is established are not seen: keep making runs until two were.
    const created: string[] = [];
    while (seen.length < 2 && created.length < 50) {
      const run = await client.runs.create(thread.thread_id, 'echo', { input: human(String(created.length)) });
      await client.runs.join(thread.thread_id, run.run_id);
      created.push(run.run_id);
    }
    await joined;
    const at = created.indexOf(seen[0]!);
    assert.ok(at >= 0);
    assert.deepEqual(seen, created.slice(at, at + 2), 'consecutive runs, in order');
  });

  test('after_seconds delays the start; webhook receives the finished run', async () => {
    const received: any[] = [];
    const { createServer } = await import('node:http');
    const hook = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => { body += chunk; });
      request.on('end', () => {
        received.push(JSON.parse(body));
        response.end('ok');
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    try {
      const port = (hook.address() as { port: number }).port;
      const thread = await client.threads.create();
      const run = await client.runs.create(thread.thread_id, 'echo', { input: human('later'), afterSeconds: 1, webhook: `http://127.0.0.1:${port}/hook` });
      assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'pending');
      await client.runs.join(thread.thread_id, run.run_id);
      await pollUntil(async () => received.length, (n) => n === 1);
      assert.equal(received[0].run_id, run.run_id);
      assert.equal(received[0].status, 'success');
      assert.equal(received[0].values.messages.length, 2);
    } finally {
      hook.close();
    }
  });

  test('bad input: unknown assistant 404, missing thread 404 unless if_not_exists create, bad strategy 422', async () => {
    await assert.rejects(client.runs.wait(null, 'nope', { input: {} }), (error: any) => error.status === 404);
    const id = crypto.randomUUID();
    await assert.rejects(client.runs.create(id, 'echo', { input: human('x') }), (error: any) => error.status === 404);
    const run = await client.runs.create(id, 'echo', { input: human('x'), ifNotExists: 'create' });
    await client.runs.join(id, run.run_id);
    const response = await fetch(`${server.url}/threads/${id}/runs`, {
      method: 'POST', headers: { 'x-api-key': server.storage.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'echo', multitask_strategy: 'sometimes' }),
    });
    assert.equal(response.status, 422);
    const body: any = await response.json();
    assert.deepEqual(body.detail[0].loc, ['body', 'multitask_strategy']);
  });
});
