import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import { RedisEventBus } from '../../../src/platform/events/redis-event-bus.ts';
import { redisUnavailable, TEST_REDIS_URL, uniqueChannel } from '../../helpers/redis.ts';
import { collector, crossesOnlyWhileAnnounced, hearsInOrder, pause } from './cross-process-bus.ts';

const skip = await redisUnavailable();

describe('redis event bus', { skip }, () => {
  test('another bus on the channel hears messages in order, large ones whole; the sender only once', async () => {
    const channel = uniqueChannel('order');
    const sender = await RedisEventBus.start(TEST_REDIS_URL, channel);
    const receiver = await RedisEventBus.start(TEST_REDIS_URL, channel);
    const elsewhere = await RedisEventBus.start(TEST_REDIS_URL, uniqueChannel('other'));
    elsewhere.subscribe('run:1', () => assert.fail('a bus on another channel heard it'));
    receiver.subscribe('run:2', () => assert.fail('wrong topic'));
    // multi-byte, and with the framing's own separators in it
    await hearsInOrder(sender, receiver, 'run:1', 'é'.repeat(1_000_000) + '\n|end');
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
    await crossesOnlyWhileAnnounced(sender, receiver, 'run:4');
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
