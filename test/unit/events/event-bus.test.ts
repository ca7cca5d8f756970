import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDb, type Db } from '../../../src/platform/db/index.ts';
import { LocalEventBus, PostgresEventBus } from '../../../src/platform/events/event-bus.ts';
import { collector, crossesOnlyWhileAnnounced, hearsInOrder } from './cross-process-bus.ts';

let db: Db;
before(async () => {
  db = await openDb({ databaseUrl: undefined, databaseSchema: 'public', pgliteDir: 'memory://' });
});
after(() => db.close());

describe('event buses', () => {
  test('local bus delivers to subscribers of the topic only, until they unsubscribe', () => {
    const bus = new LocalEventBus();
    const a = collector();
    const stop = bus.subscribe('a', a.handler);
    bus.subscribe('b', () => assert.fail('wrong topic'));
    bus.publish('a', 'one');
    stop();
    bus.publish('a', 'two');
    assert.deepEqual(a.got, ['one']);
  });

  test('another bus on the same database hears messages in order, large ones reassembled', async () => {
    const sender = await PostgresEventBus.start(db, 'bus_test');
    const receiver = await PostgresEventBus.start(db, 'bus_test');
    // three NOTIFY payloads: the receiver puts them together
    await hearsInOrder(sender, receiver, 'run:1', 'x'.repeat(20_000));
    await sender.close();
    await receiver.close();
  });
});

describe('announced topics', () => {
  test('bulky messages reach another process only while it announces interest', async () => {
    const sender = await PostgresEventBus.start(db, 'bus_interest');
    const receiver = await PostgresEventBus.start(db, 'bus_interest');
    await crossesOnlyWhileAnnounced(sender, receiver, 'run:2');
    await sender.close();
    await receiver.close();
  });
});
