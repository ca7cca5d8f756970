// Webhooks are durable: a finished run's delivery is recorded with the run's end, retried until its URL
// accepts it, and delivered by the next process when the one that ended the run died before delivering.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { PATIENTLY, pollUntil, processesForFile } from '../fixtures/agents/server.ts';

const processes = processesForFile();
const receivers: Server[] = [];
after(async () => {
  for (const receiver of receivers) receiver.close();
});

/** A webhook receiver that answers `status()` and records every body it was sent. */
async function receiver(status: () => number): Promise<{ url: string; bodies: any[] }> {
  const bodies: any[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk) => { body += chunk; });
    request.on('end', () => {
      bodies.push(JSON.parse(body));
      response.statusCode = status();
      response.end();
    });
  });
  receivers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, bodies };
}

const human = (content: string) => ({ messages: [{ role: 'user', content }] });

describe('agent server webhooks', { timeout: 90_000 }, () => {
  test('a refused delivery is retried until accepted; the body is the finished run with its values', async () => {
    const storage = await processes.storage();
    const server = await processes.spawn(storage);
    let refusals = 2;
    const hook = await receiver(() => (refusals-- > 0 ? 503 : 200));
    const thread = await server.client.threads.create();
    const run = await server.client.runs.create(thread.thread_id, 'echo', { input: human('hook me'), webhook: hook.url });
    await pollUntil(async () => hook.bodies.length, (n) => n >= 3, PATIENTLY);
    const [first, , last] = hook.bodies;
    assert.equal(last.run_id, run.run_id);
    assert.equal(last.thread_id, thread.thread_id);
    assert.equal(last.status, 'success');
    assert.equal(last.webhook, hook.url);
    assert.deepEqual(last.values.messages.map((m: any) => [m.type, m.content]), [['human', 'hook me'], ['ai', 'hello from env #1']]);
    assert.ok(Date.parse(last.webhook_sent_at) >= Date.parse(first.webhook_sent_at));
    assert.ok(last.run_ended_at && last.run_started_at);
    // Accepted once: nothing more arrives.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(hook.bodies.length, 3);
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  });

  test('a delivery its process could not make before SIGKILL is made by the next process', async () => {
    const storage = await processes.storage();
    const first = await processes.spawn(storage);
    let accept = false;
    const hook = await receiver(() => (accept ? 200 : 503));
    const thread = await first.client.threads.create();
    const run = await first.client.runs.create(thread.thread_id, 'echo', { input: human('survive'), webhook: hook.url });
    await pollUntil(async () => hook.bodies.length, (n) => n >= 1, PATIENTLY);
    first.child.kill('SIGKILL');
    await first.exited;
    const refusedBeforeKill = hook.bodies.length;
    accept = true;

    const second = await processes.spawn(storage);
    await pollUntil(async () => hook.bodies.length, (n) => n > refusedBeforeKill, PATIENTLY);
    assert.equal(hook.bodies.at(-1).run_id, run.run_id);
    assert.equal(hook.bodies.at(-1).status, 'success');
    assert.equal((await second.client.runs.get(thread.thread_id, run.run_id)).status, 'success');
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0);
  });
});
