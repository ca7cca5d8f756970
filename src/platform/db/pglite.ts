import { PGlite, parse as pgliteParse, protocol } from '@electric-sql/pglite';
import { Kysely, PGliteDialect } from 'kysely';
import { formatTimestamptz, INT8_OID, TIMESTAMPTZ_OID, type Db } from './db.ts';
import { preparedName } from './prepared.ts';

type BackendMessage = Awaited<ReturnType<PGlite['execProtocolStream']>>[number];

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

  const runPrepared = preparedStatements(pglite);

  return {
    engine: 'pglite',
    native: { engine: 'pglite', pglite },
    kysely,
    schema: 'public',
    async query<T>(text: string, params?: unknown[]) {
      const name = preparedName(text);
      if (name) return runPrepared<T>(name, text, params ?? []);
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

/**
 * Statements marked with `prepared` (see prepared.ts), run as named prepared statements through PGlite's
 * wire protocol: parsed and described once, then each execution is one bind, execute and sync — where
 * PGlite's `query` parses, plans and describes every time (planning a run's end statement alone costs
 * ~1 ms in WASM). Same locks, parameter serializers and result parsers as `query`.
 */
function preparedStatements(pglite: PGlite) {
  const { serialize } = protocol;
  const described = new Map<string, { paramTypes: number[]; row: BackendMessage | undefined }>();
  const send = (message: Uint8Array) => pglite.execProtocolStream(message, { syncToFs: false });
  return <T>(name: string, text: string, params: unknown[]): Promise<T[]> =>
    pglite._runExclusiveTransaction(() => pglite._runExclusiveQuery(async () => {
      const messages: BackendMessage[] = [];
      try {
        let statement = described.get(name);
        if (!statement) {
          // A statement left by a preparation that failed half-way is replaced.
          await send(serialize.close({ type: 'S', name }));
          await send(serialize.parse({ name, text, types: [] }));
          const description = await send(serialize.describe({ type: 'S', name }));
          statement = { paramTypes: pgliteParse.parseDescribeStatementResults(description), row: description.find((message) => message.name === 'rowDescription') };
          described.set(name, statement);
        }
        const { paramTypes, row } = statement;
        const values = params.map((value, index) => {
          if (value === null || value === undefined) return null;
          const serializer = pglite.serializers[paramTypes[index]!];
          return serializer ? serializer(value) : String(value);
        });
        if (row) messages.push(row);
        messages.push(...(await send(serialize.bind({ statement: name, values }))), ...(await send(serialize.execute({}))));
      } catch (error) {
        if (error && typeof error === 'object') Object.assign(error, { query: text, params });
        throw error;
      } finally {
        messages.push(...(await send(serialize.sync())));
      }
      await pglite.syncToFs();
      return pgliteParse.parseResults(messages, pglite.parsers)[0]!.rows as T[];
    }));
}
