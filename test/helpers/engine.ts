// Which storage engine the integration tests run on: `BERTH_TEST_ENGINE=postgres` uses TEST_DATABASE_URL
// with a fresh schema per test server; the default is embedded PGlite.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const ENGINE: 'pglite' | 'postgres' = process.env.BERTH_TEST_ENGINE === 'postgres' ? 'postgres' : 'pglite';
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

if (ENGINE === 'postgres' && !process.env.TEST_DATABASE_URL) {
  throw new Error('BERTH_TEST_ENGINE=postgres needs TEST_DATABASE_URL');
}

export function uniqueSchema(): string {
  return `t_${randomBytes(6).toString('hex')}`;
}

/** Drops a test schema and the job queue's schema beside it. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; DROP SCHEMA IF EXISTS ${schema}_jobs CASCADE`);
  } finally {
    await client.end();
  }
}
