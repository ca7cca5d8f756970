// Forward-only migrations: numbered .sql files applied in order, once, under a lock.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export class SchemaTooNewError extends Error {}

export async function loadMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file)).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    migrations.push({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: await readFile(new URL(file, `file://${dir}`), 'utf8'),
    });
  }
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(`Migration ${migration.version}_${migration.name} is out of sequence (expected ${index + 1})`);
    }
  });
  return migrations;
}

/** Applies pending migrations; refuses to run against a schema newer than this code. Returns the versions applied. */
export async function migrate(db: Db, migrations?: Migration[]): Promise<number[]> {
  const known = migrations ?? (await loadMigrations());
  return db.withLock('migrate', async () => {
    await db.exec(`CREATE TABLE IF NOT EXISTS berth_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const rows = await db.query<{ version: number }>('SELECT version FROM berth_migrations ORDER BY version');
    const applied = new Set(rows.map((row) => row.version));
    const newest = rows.at(-1)?.version ?? 0;
    if (newest > known.length) {
      throw new SchemaTooNewError(
        `The database schema is at version ${newest}, newer than this Berth (${known.length}). Upgrade Berth.`,
      );
    }
    const done: number[] = [];
    for (const migration of known) {
      if (applied.has(migration.version)) continue;
      // Each migration and its bookkeeping row commit together, so a crash leaves it applied or not at all.
      await db.exec(`BEGIN;\n${migration.sql}\n;INSERT INTO berth_migrations (version, name) VALUES (${migration.version}, '${migration.name}');\nCOMMIT;`);
      done.push(migration.version);
    }
    // Fresh statistics for the planner after the schema (or the engine, on first start) changed.
    if (done.length > 0) await db.exec('ANALYZE');
    return done;
  });
}
