import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { advisoryKey, formatTimestamptz, INT8_OID, TIMESTAMPTZ_OID, type Db } from './db.ts';
import { preparedName } from './prepared.ts';

const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === TIMESTAMPTZ_OID) return formatTimestamptz;
    if (oid === INT8_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

export interface PostgresOptions {
  url: string;
  schema: string;
  poolSize?: number;
}

/** PostgreSQL over `pg`: every connection uses UTC and Berth's schema first on its search path. */
export async function openPostgres({ url, schema, poolSize = 10 }: PostgresOptions): Promise<Db> {
  const poolConfig = {
    connectionString: url,
    max: poolSize,
    types,
    options: `-c search_path=${schema},public -c TimeZone=UTC`,
  };
  const bootstrap = new pg.Client({ connectionString: url });
  await bootstrap.connect();
  try {
    await bootstrap.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  } finally {
    await bootstrap.end();
  }
  const pool = new pg.Pool(poolConfig);
  // An idle client that loses its server (restart, failover) must not crash the process.
  pool.on('error', () => undefined);
  const kysely = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  let listener: pg.Client | undefined;
  const handlers = new Map<string, Set<(payload: string) => void>>();

  async function listenerClient(): Promise<pg.Client> {
    if (listener) return listener;
    const client = new pg.Client(poolConfig);
    client.on('error', () => undefined);
    client.on('notification', (msg) => {
      for (const handler of handlers.get(msg.channel) ?? []) handler(msg.payload ?? '');
    });
    await client.connect();
    listener = client;
    return client;
  }

  return {
    engine: 'postgres',
    native: { engine: 'postgres', url, schema },
    kysely,
    schema,
    async query<T>(text: string, params?: unknown[]) {
      // A statement without parameters may hold several commands: only the simple protocol runs those.
      const name = params?.length ? preparedName(text) : undefined;
      const result = name
        ? await pool.query({ name, text, values: params as unknown[] })
        : await pool.query(text, params as unknown[]);
      return result.rows as T[];
    },
    async exec(text: string) {
      await pool.query(text);
    },
    async listen(channel, onPayload) {
      const client = await listenerClient();
      let set = handlers.get(channel);
      if (!set) {
        set = new Set();
        handlers.set(channel, set);
        await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      }
      set.add(onPayload);
      return async () => {
        set.delete(onPayload);
      };
    },
    async notify(channel, payload) {
      await pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    async withLock(key, fn) {
      const client = await pool.connect();
      try {
        await client.query('SELECT pg_advisory_lock($1)', [advisoryKey(`${schema}:${key}`)]);
        try {
          return await fn();
        } finally {
          await client.query('SELECT pg_advisory_unlock($1)', [advisoryKey(`${schema}:${key}`)]);
        }
      } finally {
        client.release();
      }
    },
    async close() {
      await listener?.end().catch(() => undefined);
      await kysely.destroy();
    },
  };
}
