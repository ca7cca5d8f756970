import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDb, type Db } from '../../../src/platform/db/index.ts';
import { LocalEventBus, PostgresEventBus } from '../../../src/platform/events/event-bus.ts';

let db: Db;
before(async () => {
  db = await openDb({ databaseUrl: undefined, databaseSchema: 'public', pgliteDir: 'memory://' });
});
after(() => db.close());

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
    const local = collector();
    const remote = collector();
    sender.subscribe('run:1', local.handler);
    receiver.subscribe('run:1', remote.handler);
    const big = 'x'.repeat(20_000);
    sender.publish('run:1', 'first');
    sender.publish('run:1', big);
    sender.publish('run:1', 'last');
    await sender.flush();
    await remote.until(3);
    assert.deepEqual(remote.got, ['first', big, 'last']);
    assert.deepEqual(local.got, ['first', big, 'last'], 'local subscribers hear their own process once');
    await sender.close();
    await receiver.close();
  });
});

describe('announced topics', () => {
  test('bulky messages reach another process only while it announces interest', async () => {
    const sender = await PostgresEventBus.start(db, 'bus_interest');
    const receiver = await PostgresEventBus.start(db, 'bus_interest');
    const remote = collector();
    receiver.subscribe('run:2', remote.handler);
    sender.publish('run:2', 'unheard', { onlyIfAnnounced: true });
    sender.publish('run:2', 'control');
    await sender.flush();
    await remote.until(1);
    const withdraw = await receiver.announce('run:2');
    // the announcement travels through the database: wait until the sender has heard it
    for (let i = 0; i < 100 && remote.got.length < 2; i++) {
      sender.publish('run:2', `data ${i}`, { onlyIfAnnounced: true });
      await sender.flush();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(remote.got[0], 'control');
    assert.match(remote.got[1]!, /^data \d+$/);
    withdraw();
    await receiver.flush();
    await sender.close();
    await receiver.close();
  });
});
