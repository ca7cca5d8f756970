import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDb, migrate, type Db } from '../../../src/platform/db/index.ts';
import { DbStore } from '../../../src/modules/agents/store.ts';

let db: Db;
let store: DbStore;
before(async () => {
  db = await openDb({ databaseUrl: undefined, databaseSchema: 'public', pgliteDir: 'memory://' });
  await migrate(db);
  store = new DbStore(db);
});
after(() => db.close());

describe('DbStore', () => {
  test('put, get, search by prefix and filter, delete', async () => {
    await store.put(['users', 'u1', 'prefs'], 'theme', { color: 'dark', size: 2 });
    await store.put(['users', 'u1', 'prefs'], 'lang', { code: 'fr' });
    await store.put(['users', 'u2'], 'theme', { color: 'light' });
    const item = await store.get(['users', 'u1', 'prefs'], 'theme');
    assert.deepEqual(item?.value, { color: 'dark', size: 2 });
    assert.ok(item?.createdAt instanceof Date);
    assert.equal((await store.search(['users'])).length, 3);
    assert.equal((await store.search(['users', 'u1'])).length, 2);
    assert.equal((await store.search(['users', 'u'])).length, 0, 'prefix matches whole labels');
    assert.deepEqual((await store.search(['users'], { filter: { color: 'dark' } })).map((i) => i.key), ['theme']);
    assert.equal((await store.search(['users'], { limit: 1, offset: 1 })).length, 1);
    await store.delete(['users', 'u1', 'prefs'], 'theme');
    assert.equal(await store.get(['users', 'u1', 'prefs'], 'theme'), null);
  });

  test('list namespaces with prefix, suffix, wildcard and max depth', async () => {
    await store.put(['a', 'b', 'c'], 'k', { v: 1 });
    await store.put(['a', 'x', 'c'], 'k', { v: 1 });
    await store.put(['z'], 'k', { v: 1 });
    assert.deepEqual(await store.listNamespaces({ prefix: ['a'] }), [['a', 'b', 'c'], ['a', 'x', 'c']]);
    assert.deepEqual(await store.listNamespaces({ prefix: ['a', '*', 'c'], maxDepth: 2 }), [['a', 'b'], ['a', 'x']]);
    assert.deepEqual(await store.listNamespaces({ suffix: ['x', 'c'] }), [['a', 'x', 'c']]);
  });

  test('items expire after their TTL and are swept', async () => {
    await store.putItem(['ttl'], 'short', { v: 1 }, 0.0001);
    await store.putItem(['ttl'], 'long', { v: 1 }, 60);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(await store.getItem(['ttl'], 'short'), undefined);
    assert.ok(await store.getItem(['ttl'], 'long'));
    assert.equal(await store.sweepExpired(), 1);
  });

  test('namespace labels with periods are rejected', async () => {
    await assert.rejects(store.put(['a.b'], 'k', {}), /periods/);
  });
});
