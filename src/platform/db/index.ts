import path from 'node:path';
import { mkdir } from 'node:fs/promises';
import type { Db } from './db.ts';
import { openPglite } from './pglite.ts';
import { openPostgres } from './postgres.ts';

export type { Db, Engine, SqlExecutor } from './db.ts';
export { formatTimestamptz } from './db.ts';
export { prepared } from './prepared.ts';
export { migrate, loadMigrations, SchemaTooNewError } from './migrate.ts';

export interface OpenDbOptions {
  databaseUrl: string | undefined;
  databaseSchema: string;
  /** Folder for the embedded engine's files, or `memory://`. */
  pgliteDir: string;
}

/** Storage as configured: PostgreSQL with a URL, else PGlite under the data directory (or `pgliteDir`). */
export function storageOptions(config: { databaseUrl: string | undefined; databaseSchema: string; dataDir: string }, pgliteDir?: string): OpenDbOptions {
  return { databaseUrl: config.databaseUrl, databaseSchema: config.databaseSchema, pgliteDir: pgliteDir ?? path.join(config.dataDir, 'pgdata') };
}

/** The one place that picks the storage engine. */
export async function openDb(options: OpenDbOptions): Promise<Db> {
  if (options.databaseUrl) {
    return openPostgres({ url: options.databaseUrl, schema: options.databaseSchema });
  }
  if (!options.pgliteDir.startsWith('memory://')) {
    await mkdir(path.dirname(options.pgliteDir), { recursive: true });
  }
  return openPglite(options.pgliteDir);
}
