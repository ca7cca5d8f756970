// What every bus between processes does, checked by the PostgreSQL and the Redis bus tests on their own
// transport: `sender` and `receiver` stand for two processes on one channel.
import assert from 'node:assert/strict';
import type { EventBus } from '../../../src/platform/events/event-bus.ts';

/** A handler that records the messages it hears; `until(count)` waits until it heard that many. */
export function collector() {
  const got: string[] = [];
  let wake: (() => void) | undefined;
  return {
    got,
    handler: (message: string) => { got.push(message); wake?.(); },
    async until(count: number) {
      while (got.length < count) await new Promise<void>((resolve) => { wake = resolve; });
    },
  };
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits (at most about 5 s) until `done` holds: for what travels through the transport without a message to wait for. */
async function settled(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await pause(10);
}

/** The receiver hears one publisher's messages on the topic in order, `big` whole; the sender's own subscribers hear them once. */
export async function hearsInOrder(sender: EventBus, receiver: EventBus, topic: string, big: string): Promise<void> {
  const local = collector();
  const remote = collector();
  sender.subscribe(topic, local.handler);
  receiver.subscribe(topic, remote.handler);
  sender.publish(topic, 'first');
  sender.publish(topic, big);
  sender.publish(topic, 'last');
  await sender.flush();
  await remote.until(3);
  assert.deepEqual(remote.got, ['first', big, 'last']);
  assert.deepEqual(local.got, ['first', big, 'last'], 'local subscribers hear their own process once');
}

/** Messages published `onlyIfAnnounced` reach the receiver only while it announces interest in the topic; others always do. */
export async function crossesOnlyWhileAnnounced(sender: EventBus, receiver: EventBus, topic: string): Promise<void> {
  const remote = collector();
  receiver.subscribe(topic, remote.handler);
  sender.publish(topic, 'unheard', { onlyIfAnnounced: true });
  sender.publish(topic, 'control');
  await sender.flush();
  await remote.until(1);
  assert.equal(sender.listening(topic), false);
  const withdraw = await receiver.announce(topic);
  // the announcement travels through the transport: wait until the sender has heard it
  await settled(() => sender.listening(topic));
  assert.equal(sender.listening(topic), true, 'the announcement reached the sender');
  sender.publish(topic, 'data', { onlyIfAnnounced: true });
  await sender.flush();
  await remote.until(2);
  assert.deepEqual(remote.got, ['control', 'data']);
  withdraw();
  await receiver.flush();
  await settled(() => !sender.listening(topic));
  assert.equal(sender.listening(topic), false, 'the withdrawal reached the sender');
}
