// PGlite runs statements marked with `prepared` as named prepared statements over its wire protocol:
// the same rows, parameter encodings, type parsing and errors as its ordinary query path.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDb, type Db } from '../../../src/platform/db/index.ts';
import { prepared } from '../../../src/platform/db/prepared.ts';

let db: Db;
before(async () => {
  db = await openDb({ databaseUrl: undefined, databaseSchema: 'public', pgliteDir: 'memory://' });
  await db.exec(`CREATE TABLE items (id uuid PRIMARY KEY, n bigint, ratio float8, flag boolean, doc jsonb, at timestamptz DEFAULT now(), tags text[])`);
});
after(() => db.close());

const UPSERT = `INSERT INTO items (id, n, ratio, flag, doc, tags) VALUES ($1, $2, $3, $4, $5::jsonb, $6)
  ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n RETURNING id, n, ratio, flag, doc, at, tags /* pglite-prepared */`;
const SELECT = `SELECT id, n, ratio, flag, doc, at, tags FROM items WHERE id = ANY($1::uuid[]) AND ($2::boolean IS NULL OR flag = $2) ORDER BY n /* pglite-prepared */`;

test('a marked statement is prepared once and returns what the unprepared one returns', async () => {
  const ids = [crypto.randomUUID(), crypto.randomUUID()];
  const plain = await db.query<any>(UPSERT, [ids[0], 2 ** 40, 0.5, true, JSON.stringify({ a: [1, 'x'] }), ['p', 'q"r']]);
  const viaPrepared = await db.query<any>(prepared(UPSERT), [ids[1], 7, 1.25, false, '{"b":null}', []]);
  assert.deepEqual(Object.keys(viaPrepared[0]), Object.keys(plain[0]));
  assert.deepEqual({ ...viaPrepared[0], at: typeof viaPrepared[0].at }, { id: ids[1], n: 7, ratio: 1.25, flag: false, doc: { b: null }, at: 'string', tags: [] });
  for (let i = 0; i < 3; i++) {
    const both = await db.query<any>(prepared(SELECT), [ids, null]);
    assert.deepEqual(both.map((row) => row.id), [ids[1], ids[0]]);
    assert.deepEqual(both, await db.query<any>(SELECT, [ids, null]));
    assert.deepEqual((await db.query<any>(prepared(SELECT), [ids, true])).map((row) => row.tags), [['p', 'q"r']]);
  }
  const statements = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE '%/* pglite-prepared */%'`);
  assert.equal(statements[0]!.n, 2, 'each marked text prepared once');
});

test('errors of prepared statements carry their code; the statement and the connection stay usable', async () => {
  const text = prepared(`INSERT INTO items (id, n) VALUES ($1, $2) /* pglite-prepared insert */`);
  const id = crypto.randomUUID();
  await db.query(text, [id, 1]);
  await assert.rejects(db.query(text, [id, 1]), (error: any) => error.code === '23505');
  await assert.rejects(db.query(text, ['not a uuid', 1]), (error: any) => error.code === '22P02');
  await db.query(text, [crypto.randomUUID(), 2]);
  await assert.rejects(db.query(prepared('SELEC nothing /* pglite-prepared broken */'), []), (error: any) => error.code === '42601');
  await assert.rejects(db.query(prepared('SELEC nothing /* pglite-prepared broken */'), []), (error: any) => error.code === '42601', 'a failed preparation is tried again');
  assert.equal((await db.query<{ n: number }>(prepared('SELECT count(*)::int AS n FROM items WHERE n = $1 /* pglite-prepared */'), [2]))[0]!.n, 1);
});
