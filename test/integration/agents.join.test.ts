// Joining a running resumable run through the SDK Client: leave mid-way, come back with the last event
// id received (Last-Event-ID), and the run's whole event log arrives exactly once, in order.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { agentServerForFile } from '../fixtures/agents/server.ts';

const server = await agentServerForFile();
const { client } = server;

interface Received {
  id?: string;
  event: string;
  data: any;
}

/** Reads a join-stream until `stop` says so (then really disconnects) or the run ends. */
async function read(threadId: string, runId: string, lastEventId: string | undefined, into: Received[], stop: (event: Received) => boolean | Promise<boolean>): Promise<void> {
  const controller = new AbortController();
  try {
    const stream = client.runs.joinStream(threadId, runId, { lastEventId, signal: controller.signal }) as AsyncIterable<Received>;
    for await (const event of stream) {
      into.push(event);
      if (await stop(event)) break;
    }
  } finally {
    controller.abort();
  }
}

const progress = (event: Received) => (event.event === 'custom' ? event.data.progress : undefined);

describe('run join-stream', { timeout: 40_000 }, () => {
  test('rejoining a running resumable run with the last id received gives every event once, in order', async () => {
    const thread = await client.threads.create();
    const gate = `gate-${thread.thread_id}`;
    // Past the gate the events come in a burst, faster than they are stored: the rejoins land mid-burst.
    const count = 400;
    const run = await client.runs.create(thread.thread_id, 'custom', {
      input: { count, gate, pause_at: 5 }, streamMode: ['custom', 'values', 'updates'], streamResumable: true,
    });
    const received: Received[] = [];

    // The run waits at its gate before progress 5: leave after progress 2, while it is still running.
    await read(thread.thread_id, run.run_id, undefined, received, (event) => progress(event) === 2);
    assert.equal(received[0]!.event, 'metadata');
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'running', 'left mid-way');

    // Back from the last id: the stored events replay, the gate opens, live events follow; leave again.
    let opened = false;
    await read(thread.thread_id, run.run_id, received.at(-1)!.id, received, async (event) => {
      if (!opened) {
        opened = true;
        await client.store.putItem(['fixture', 'gate'], gate, { open: true });
      }
      return progress(event) === 20;
    });

    // Again from the last id, leaving mid-burst; then once more, to the end of the run.
    await read(thread.thread_id, run.run_id, received.at(-1)!.id, received, (event) => progress(event) === 200);
    await read(thread.thread_id, run.run_id, received.at(-1)!.id, received, () => false);
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'success');

    assert.deepEqual(received.filter((event) => event.event === 'custom').map((event) => event.data.progress),
      Array.from({ length: count }, (_, index) => index), 'each progress event once, in order');
    const ids = received.map((event) => Number(event.id));
    assert.deepEqual(ids, Array.from({ length: ids.length }, (_, index) => index), 'ids are the run\'s sequence numbers, none missed or repeated');
    // The same log as a join after the end (which replays it all).
    const whole: Received[] = [];
    await read(thread.thread_id, run.run_id, undefined, whole, () => false);
    assert.deepEqual(received, whole);
    assert.ok(whole.some((event) => event.event === 'values') && whole.some((event) => event.event === 'updates'));
  });

  test('a Last-Event-ID past the end of a finished run gives no events; an empty one replays everything', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'custom', { input: { count: 3 }, streamMode: ['custom'], streamResumable: true });
    await client.runs.join(thread.thread_id, run.run_id);
    const whole: Received[] = [];
    await read(thread.thread_id, run.run_id, undefined, whole, () => false);
    assert.deepEqual(whole.map((event) => event.event), ['metadata', 'custom', 'custom', 'custom']);
    const rest: Received[] = [];
    await read(thread.thread_id, run.run_id, whole.at(-1)!.id, rest, () => false);
    assert.deepEqual(rest, []);
    const response = await fetch(`${server.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream`, {
      headers: { 'x-api-key': server.storage.apiKey, 'last-event-id': '' },
    });
    const ids = [...(await response.text()).matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
    assert.deepEqual(ids, [0, 1, 2, 3]);
  });
});
