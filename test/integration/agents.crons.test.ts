// Crons: the API (create, search, count, patch, delete) and firing exactly once per scheduled time. The
// firing tests drive the steps of the scheduler (claim, deliver, recover) on a cron whose next occurrence
// is half a year away, so that the scheduler of the server never fires it itself.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@langchain/langgraph-sdk';
import type { CronRow } from '../../src/modules/agents/crons.ts';
import { agentServerForFile, newStorage, pollUntil, startTestAgentServer, type TestAgentServer } from '../fixtures/agents/server.ts';

const server = await agentServerForFile();
const { client } = server;
const fires = server.running.server.cronFires;
// Once a year, next on the day half a year from now.
const halfYear = new Date(Date.now() + 182 * 86_400_000);
const YEARLY = `0 0 ${halfYear.getUTCDate()} ${halfYear.getUTCMonth() + 1} *`;

const get = (url: string, headers: Record<string, string> = {}) => fetch(`${server.url}${url}`, { headers });

/** A yearly thread cron of `echo` on a new thread, and its row as the scheduler reads it. */
async function yearlyThreadCron(on: TestAgentServer, payload: Record<string, unknown> = {}): Promise<{ threadId: string; cron: CronRow }> {
  const thread = await on.client.threads.create();
  const created = await on.client.crons.createForThread(thread.thread_id, 'echo', { schedule: YEARLY, input: { messages: [] }, ...payload } as any);
  return { threadId: thread.thread_id, cron: await on.running.server.crons.get(created.cron_id) };
}

/** The runs of a thread fired for one scheduled time. */
async function firedFor(on: Client, threadId: string, scheduledFor: string) {
  const runs = await on.runs.list(threadId, { limit: 100 });
  return runs.filter((run) => (run.metadata as any).cron_scheduled_for === scheduledFor);
}

describe('crons', { timeout: 30_000 }, () => {
  test('a stateless cron fires on schedule; search, count, patch, delete', async () => {
    const finishedRuns = async () => {
      const text = await (await get('/metrics', { 'x-api-key': server.storage.apiKey })).text();
      return Number(/berth_agent_runs_finished_total\{status="success"\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    const startCount = await finishedRuns();
    const cron = await client.crons.create('echo', { schedule: '* * * * * *', input: { messages: [{ role: 'user', content: 'tick' }] }, metadata: { kind: 'test' } } as any);
    assert.ok(cron.cron_id);
    assert.equal(await (client.crons as any).count({ assistantId: 'echo' }), 1);
    const found = await client.crons.search({ assistantId: 'echo' });
    assert.equal(found[0]!.cron_id, cron.cron_id);
    // Fired runs are stateless (temporary threads deleted): the metrics count them.
    await pollUntil(finishedRuns, (n) => n >= startCount + 2);
    const patched = await (client.crons as any).update(cron.cron_id, { enabled: false });
    assert.equal(patched.enabled, false);
    await client.crons.delete(cron.cron_id);
    assert.equal(await (client.crons as any).count({ assistantId: 'echo' }), 0);
  });

  test('a thread cron runs on its thread; a bad schedule is a 422', async () => {
    const thread = await client.threads.create();
    const cron = await client.crons.createForThread(thread.thread_id, 'echo', { schedule: '* * * * * *', input: { messages: [] } } as any);
    await pollUntil(() => client.runs.list(thread.thread_id), (runs) => runs.some((run) => run.status === 'success'));
    await client.crons.delete(cron.cron_id);
    await assert.rejects(client.crons.create('echo', { schedule: 'every tuesday' } as any), (error: any) => error.status === 422);
  });
});

describe('cron fires, exactly once', { timeout: 60_000 }, () => {
  test('a fire claimed by a process that stopped before creating its run is created once by the next process', async () => {
    const storage = await newStorage();
    const first = await startTestAgentServer({ storage });
    const { threadId, cron } = await yearlyThreadCron(first);
    // The crash window: the occurrence is claimed (the cron moved on, the fire recorded), no run yet.
    const fire = (await first.running.server.cronFires.claim(cron))!;
    assert.equal(fire.scheduled_for, cron.next_run_date);
    assert.ok(Date.parse((await first.client.crons.search({ threadId }))[0]!.next_run_date!) > Date.parse(cron.next_run_date!));
    assert.deepEqual(await first.client.runs.list(threadId), []);
    await first.close({ keepData: true });

    const second = await startTestAgentServer({ storage });
    try {
      // Recovery waits a few seconds for the claimer; here it may take the fire at once.
      await second.running.server.cronFires.recover(0);
      const [run, ...others] = await firedFor(second.client, threadId, fire.scheduled_for);
      assert.equal(run?.run_id, fire.run_id);
      assert.deepEqual(others, []);
      await second.client.runs.join(threadId, fire.run_id);
      assert.equal((await second.client.runs.get(threadId, fire.run_id)).status, 'success');
      // Later attempts find nothing owed.
      assert.equal(await second.running.server.cronFires.recover(0), 0);
      assert.equal(await second.running.server.cronFires.deliver(cron, fire), 'not_owed');
      assert.equal((await firedFor(second.client, threadId, fire.scheduled_for)).length, 1);
    } finally {
      await second.close();
    }
  });

  test('a fire delivered twice at once creates one run, and none again after that run was deleted (as a stateless run is when it ends)', async () => {
    const { threadId, cron } = await yearlyThreadCron(server);
    const fire = (await fires.claim(cron))!;
    assert.deepEqual((await Promise.all([fires.deliver(cron, fire), fires.deliver(cron, fire)])).sort(), ['created', 'not_owed']);
    assert.deepEqual((await client.runs.list(threadId)).map((run) => run.run_id), [fire.run_id]);
    await client.runs.join(threadId, fire.run_id);
    await client.runs.delete(threadId, fire.run_id);
    assert.equal(await fires.deliver(cron, fire), 'not_owed');
    assert.deepEqual(await client.runs.list(threadId), []);
    // A claim of the same occurrence again (a stale read of the cron) is refused: the cron has moved on.
    assert.equal(await fires.claim(cron), undefined);
  });

  test('a cron deleted, disabled or ended before its fire is delivered does not fire', async () => {
    const disabled = await yearlyThreadCron(server);
    const disabledFire = (await fires.claim(disabled.cron))!;
    await (client.crons as any).update(disabled.cron.cron_id, { enabled: false });
    assert.equal(await fires.deliver(disabled.cron, disabledFire), 'not_owed');

    const ended = await yearlyThreadCron(server);
    const endedFire = (await fires.claim(ended.cron))!;
    await (client.crons as any).update(ended.cron.cron_id, { endTime: new Date(Date.parse(ended.cron.next_run_date!) - 60_000).toISOString() });
    assert.equal(await fires.deliver(ended.cron, endedFire), 'not_owed');

    const deleted = await yearlyThreadCron(server);
    const deletedFire = (await fires.claim(deleted.cron))!;
    await client.crons.delete(deleted.cron.cron_id);
    assert.equal(await fires.deliver(deleted.cron, deletedFire), 'not_owed');

    for (const { threadId } of [disabled, ended, deleted]) assert.deepEqual(await client.runs.list(threadId), []);
  });

  test('a refused fire (its thread deleted, or busy under multitask_strategy reject) is done, not retried', async () => {
    const gone = await yearlyThreadCron(server);
    const goneFire = (await fires.claim(gone.cron))!;
    await client.threads.delete(gone.threadId);
    assert.equal(await fires.deliver(gone.cron, goneFire), 'refused');

    const busy = await yearlyThreadCron(server, { multitaskStrategy: 'reject' });
    const slow = await client.runs.create(busy.threadId, 'slow', { input: { ms: 1000 } });
    const busyFire = (await fires.claim(busy.cron))!;
    assert.equal(await fires.deliver(busy.cron, busyFire), 'refused');
    assert.equal(await fires.recover(0), 0, 'nothing is left owed');
    await client.runs.join(busy.threadId, slow.run_id);
    assert.deepEqual((await client.runs.list(busy.threadId)).map((run) => run.run_id), [slow.run_id]);
  });
});
