// Durability across processes: a run interrupted by SIGKILL resumes from its last checkpoint in the next
// process; two processes on one PostgreSQL share the queue and stream each other's runs (events by
// PostgreSQL NOTIFY, or by Redis with REDIS_URL).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINE, TEST_DATABASE_URL } from '../helpers/engine.ts';
import { createClient } from 'redis';
import { redisEventChannel } from '../../src/agent-server.ts';
import { cronFireRunId } from '../../src/modules/agents/cron-fires.ts';
import { redisUnavailable, TEST_REDIS_URL } from '../helpers/redis.ts';
import { PATIENTLY, pollUntil, processesForFile } from '../fixtures/agents/server.ts';

const redisSkip = ENGINE === 'postgres' ? await redisUnavailable() : undefined;
const processes = processesForFile();

describe('agent server processes', { timeout: 90_000 }, () => {
  test('a run killed mid-way (SIGKILL) is resumed from its last checkpoint by the next process', async () => {
    const storage = await processes.storage();
    const first = await processes.spawn(storage);
    const thread = await first.client.threads.create();
    const run = await first.client.runs.create(thread.thread_id, 'slow', { input: { ms: 1500 } });
    await pollUntil(() => first.client.threads.getState(thread.thread_id), (state: any) => (state.values.steps ?? []).includes('first'), PATIENTLY);
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await processes.spawn(storage);
    const events: { event: string; data: any }[] = [];
    for await (const event of second.client.runs.joinStream(thread.thread_id, run.run_id, { streamMode: ['values'] } as any)) events.push(event as any);
    const finished = await second.client.runs.get(thread.thread_id, run.run_id);
    assert.equal(finished.status, 'success');
    const state: any = await second.client.threads.getState(thread.thread_id);
    assert.deepEqual(state.values.steps, ['first', 'second'], 'the first step was not run again');
    const metadata = events.find((event) => event.event === 'metadata');
    if (metadata) assert.equal(metadata.data.attempt, 2);
    assert.equal((await second.client.threads.get(thread.thread_id)).status, 'idle');
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0);
  });

  test('a cron shared by two processes fires once per occurrence', { skip: ENGINE !== 'postgres' && 'needs PostgreSQL (PGlite is single-process)' }, async () => {
    const storage = await processes.storage();
    const one = await processes.spawn(storage, { BERTH_AGENT_CRON_INTERVAL_SECONDS: '1' });
    const two = await processes.spawn(storage, { BERTH_AGENT_CRON_INTERVAL_SECONDS: '1' });
    const thread = await one.client.threads.create();
    const cron = await one.client.crons.createForThread(thread.thread_id, 'echo', { schedule: '* * * * * *', input: { messages: [] } } as any);
    await pollUntil(() => two.client.runs.list(thread.thread_id, { limit: 100 }), (runs) => runs.length >= 4, PATIENTLY);
    await one.client.crons.delete(cron.cron_id);
    const runs = await two.client.runs.list(thread.thread_id, { limit: 100 });
    const slots = runs.map((run) => (run.metadata as any).cron_scheduled_for);
    assert.ok(slots.every((slot) => typeof slot === 'string'));
    assert.equal(new Set(slots).size, slots.length, `no occurrence fired twice: ${slots.join(', ')}`);
    assert.ok(runs.every((run) => run.run_id === cronFireRunId(cron.cron_id, (run.metadata as any).cron_scheduled_for)), 'each run has its fire\'s id');
  });

  for (const transport of ['PostgreSQL NOTIFY', 'Redis pub/sub'] as const) {
    const skip = ENGINE !== 'postgres' ? 'needs PostgreSQL (PGlite is single-process)' : transport === 'Redis pub/sub' ? redisSkip : undefined;
    test(`two processes on one PostgreSQL, events by ${transport}: a run created on one executes on the other and streams back`, { skip }, async () => {
      const storage = await processes.storage();
      const env: Record<string, string> = transport === 'Redis pub/sub' ? { REDIS_URL: TEST_REDIS_URL } : {};
      // Every message the two processes exchange through Redis, to show the events took that way.
      const overheard: string[] = [];
      const listener = transport === 'Redis pub/sub' ? createClient({ url: TEST_REDIS_URL }) : undefined;
      if (listener) {
        await listener.connect();
        await listener.subscribe(redisEventChannel(TEST_DATABASE_URL, storage.schema), (message) => overheard.push(message));
      }
      try {
        const apiOnly = await processes.spawn(storage, { N_JOBS_PER_WORKER: '0', ...env });
        const worker = await processes.spawn(storage, env);
        const thread = await apiOnly.client.threads.create();
        const events: { event: string; data: any }[] = [];
        for await (const event of apiOnly.client.runs.stream(thread.thread_id, 'agent', {
          input: { messages: [{ role: 'user', content: 'hi' }] }, streamMode: ['messages-tuple', 'values'],
        })) events.push(event as any);
        assert.equal(events[0]!.event, 'metadata');
        assert.equal(events.filter((event) => event.event === 'messages').map((event) => event.data[0].content).join(''), 'Hello there, friend');
        assert.equal((events.at(-1)!.data as any).messages.length, 2);
        const waited: any = await apiOnly.client.runs.wait(thread.thread_id, 'echo', { input: { messages: [] } });
        assert.equal(waited.messages.length, 3);

        // Cancellation requested on one process reaches the run executing on the other.
        const slow = await apiOnly.client.runs.create(thread.thread_id, 'slow', { input: { ms: 5000 } });
        await pollUntil(() => apiOnly.client.runs.get(thread.thread_id, slow.run_id), (run) => run.status === 'running', PATIENTLY);
        await apiOnly.client.runs.cancel(thread.thread_id, slow.run_id, true);
        assert.equal((await worker.client.runs.get(thread.thread_id, slow.run_id)).status, 'interrupted');
        if (listener) assert.ok(overheard.some((message) => message.includes(slow.run_id)), 'the run\'s events went through Redis');
      } finally {
        await listener?.close();
      }
    });
  }
});
