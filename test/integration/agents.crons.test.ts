// Crons: create, search, count, patch, delete; firing on schedule, for a thread or stateless.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { agentServerForFile, pollUntil } from '../fixtures/agents/server.ts';

const server = await agentServerForFile();
const { client } = server;

const get = (url: string, headers: Record<string, string> = {}) => fetch(`${server.url}${url}`, { headers });

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
