import { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect } from 'kysely';
import { formatTimestamptz, INT8_OID, TIMESTAMPTZ_OID, type Db } from './db.ts';

const ANALYZE_INTERVAL_MS = 60_000;

/**
 * Embedded PostgreSQL (WASM) in one process. It has a single connection, so callers keep transactions
 * short and never hold one across network I/O; Kysely serialises access to that connection.
 * Inside a transaction, every query must go through the transaction object: a query on `db.kysely` (or
 * any other client of this instance) waits for the transaction to end, which is waiting for it — a
 * deadlock that PostgreSQL's connection pool would hide. The job queue warms its look-ups for that reason.
 * `dataDir` is a folder, or `memory://` for a throw-away database.
 */
export async function openPglite(dataDir: string): Promise<Db> {
  const pglite = await PGlite.create(dataDir, {
    parsers: {
      [TIMESTAMPTZ_OID]: formatTimestamptz,
      [INT8_OID]: (value: string) => Number(value),
    },
  });
  await pglite.exec(`SET TIME ZONE 'UTC'`);
  const kysely = new Kysely<any>({ dialect: new PGliteDialect({ pglite }) });
  let lockChain: Promise<unknown> = Promise.resolve();
  // PGlite has no autovacuum: without fresh statistics the planner mis-estimates and picks slow plans.
  const analyze = setInterval(() => {
    if (!pglite.closed) pglite.exec('ANALYZE').catch(() => undefined);
  }, ANALYZE_INTERVAL_MS);
  analyze.unref();

  return {
    engine: 'pglite',
    native: { engine: 'pglite', pglite },
    kysely,
    schema: 'public',
    async query<T>(text: string, params?: unknown[]) {
      const result = await pglite.query<T>(text, params as any[]);
      return result.rows;
    },
    async exec(text: string) {
      await pglite.exec(text);
    },
    async listen(channel, onPayload) {
      const unlisten = await pglite.listen(channel, onPayload);
      return async () => {
        if (!pglite.closed) await unlisten();
      };
    },
    async notify(channel, payload) {
      await pglite.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    // One process owns a PGlite data directory, so an in-process queue is a complete lock.
    withLock(_key, fn) {
      const run = lockChain.then(fn, fn);
      lockChain = run.catch(() => undefined);
      return run;
    },
    async close() {
      clearInterval(analyze);
      await kysely.destroy();
      if (!pglite.closed) await pglite.close();
    },
  };
}
