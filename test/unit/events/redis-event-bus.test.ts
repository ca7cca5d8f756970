import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import { RedisEventBus } from '../../../src/platform/events/redis-event-bus.ts';
import { redisUnavailable, TEST_REDIS_URL, uniqueChannel } from '../../helpers/redis.ts';

const skip = await redisUnavailable();

function collector() {
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

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('redis event bus', { skip }, () => {
  test('another bus on the channel hears messages in order, large ones whole; the sender only once', async () => {
    const channel = uniqueChannel('order');
    const sender = await RedisEventBus.start(TEST_REDIS_URL, channel);
    const receiver = await RedisEventBus.start(TEST_REDIS_URL, channel);
    const elsewhere = await RedisEventBus.start(TEST_REDIS_URL, uniqueChannel('other'));
    const local = collector();
    const remote = collector();
    sender.subscribe('run:1', local.handler);
    receiver.subscribe('run:1', remote.handler);
    elsewhere.subscribe('run:1', () => assert.fail('a bus on another channel heard it'));
    receiver.subscribe('run:2', () => assert.fail('wrong topic'));
    const big = 'é'.repeat(1_000_000) + '\n|end';
    sender.publish('run:1', 'first');
    sender.publish('run:1', big);
    sender.publish('run:1', 'last');
    await sender.flush();
    await remote.until(3);
    assert.deepEqual(remote.got, ['first', big, 'last']);
    assert.deepEqual(local.got, ['first', big, 'last'], 'local subscribers hear their own process once');
    await sender.close();
    await receiver.close();
    await elsewhere.close();
  });

  test('an unsubscribed handler hears nothing more while others on the topic still do', async () => {
    const channel = uniqueChannel('unsubscribe');
    const sender = await RedisEventBus.start(TEST_REDIS_URL, channel);
    const receiver = await RedisEventBus.start(TEST_REDIS_URL, channel);
    const leaving = collector();
    const staying = collector();
    const stop = receiver.subscribe('run:3', leaving.handler);
    receiver.subscribe('run:3', staying.handler);
    sender.publish('run:3', 'before');
    await staying.until(1);
    stop();
    assert.equal(receiver.listening('run:3'), true);
    sender.publish('run:3', 'after');
    await staying.until(2);
    assert.deepEqual(leaving.got, ['before']);
    assert.deepEqual(staying.got, ['before', 'after']);
    await sender.close();
    await receiver.close();
  });

  test('bulky messages reach another process only while it announces interest', async () => {
    const channel = uniqueChannel('interest');
    const sender = await RedisEventBus.start(TEST_REDIS_URL, channel);
    const receiver = await RedisEventBus.start(TEST_REDIS_URL, channel);
    const remote = collector();
    receiver.subscribe('run:4', remote.handler);
    sender.publish('run:4', 'unheard', { onlyIfAnnounced: true });
    sender.publish('run:4', 'control');
    await remote.until(1);
    assert.equal(sender.listening('run:4'), false);
    const withdraw = await receiver.announce('run:4');
    // the announcement travels through Redis: wait until the sender has heard it
    for (let i = 0; i < 100 && !sender.listening('run:4'); i++) await pause(10);
    sender.publish('run:4', 'data', { onlyIfAnnounced: true });
    await remote.until(2);
    assert.deepEqual(remote.got, ['control', 'data']);
    withdraw();
    await receiver.flush();
    for (let i = 0; i < 100 && sender.listening('run:4'); i++) await pause(10);
    assert.equal(sender.listening('run:4'), false, 'the withdrawal reached the sender');
    await sender.close();
    await receiver.close();
  });

  test('a bus whose connections are killed reconnects and hears the channel again', async () => {
    const channel = uniqueChannel('reconnect');
    const name = channel.replaceAll(':', '_');
    const sender = await RedisEventBus.start(TEST_REDIS_URL, channel);
    const receiver = await RedisEventBus.start(TEST_REDIS_URL, channel, { clientName: name });
    const remote = collector();
    receiver.subscribe('run:5', remote.handler);
    sender.publish('run:5', 'before');
    await remote.until(1);

    const admin = createClient({ url: TEST_REDIS_URL });
    await admin.connect();
    const list = String(await admin.sendCommand(['CLIENT', 'LIST']));
    const ids = list.split('\n').filter((line) => line.includes(` name=${name} `)).map((line) => /^id=(\d+)/.exec(line)![1]!);
    assert.equal(ids.length, 2, 'both connections of the receiver are found');
    for (const id of ids) await admin.sendCommand(['CLIENT', 'KILL', 'ID', id]);
    await admin.close();

    // Messages published while the receiver is away are lost (as with NOTIFY); keep publishing until
    // one arrives through the new subscription.
    for (let i = 0; i < 500 && remote.got.length < 2; i++) {
      sender.publish('run:5', `after ${i}`);
      await sender.flush();
      await pause(10);
    }
    assert.match(remote.got[1] ?? '', /^after \d+$/);
    // the receiver's own publishing connection came back too
    const back = collector();
    sender.subscribe('run:6', back.handler);
    receiver.publish('run:6', 'from the receiver');
    await back.until(1);
    await sender.close();
    await receiver.close();
  });

  test('start fails when Redis does not answer', async () => {
    await assert.rejects(RedisEventBus.start('redis://127.0.0.1:1', uniqueChannel('down')));
  });
});
