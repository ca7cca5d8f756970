// The Db port: one SQL dialect (PostgreSQL) served by two engines, embedded PGlite and PostgreSQL.
import type { Kysely } from 'kysely';

export type Engine = 'pglite' | 'postgres';

/** The minimal executor pg-boss and migrations need: raw SQL with $n parameters. */
export interface SqlExecutor {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

/** What a library that manages its own connections (the job queue) needs to reach the same database. */
export type NativeConnection =
  | { engine: 'pglite'; pglite: import('@electric-sql/pglite').PGlite }
  | { engine: 'postgres'; url: string; schema: string };

export interface Db extends SqlExecutor {
  readonly engine: Engine;
  readonly native: NativeConnection;
  /** Typed query builder; modules narrow it to their own tables with `as Kysely<Tables>`. */
  readonly kysely: Kysely<any>;
  /** The schema that holds Berth's tables. */
  readonly schema: string;
  /** Runs several statements separated by semicolons (migrations). */
  exec(text: string): Promise<void>;
  /** LISTEN on a channel; the returned function stops listening. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
  /** Runs fn while holding a database-wide advisory lock (no-op lock on the single-connection engine). */
  withLock<T>(key: string, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

// Wire format of every timestamp Berth returns: ISO 8601, microseconds, explicit +00:00 offset.
// Both engines hand timestamptz over as text ("2026-01-02 03:04:05.678+00" in a UTC session);
// rewriting that text keeps the microseconds a JavaScript Date would drop.
export function formatTimestamptz(text: string): string {
  const match = /^(\d{4,}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?([+-]\d\d)(?::?(\d\d))?$/.exec(text);
  if (!match) return text;
  const [, date, time, fraction = '', hours, minutes = '00'] = match;
  return `${date}T${time}.${fraction.padEnd(6, '0')}${hours}:${minutes}`;
}

export const TIMESTAMPTZ_OID = 1184;
export const INT8_OID = 20;
export const NUMERIC_OID = 1700;

/** Stable 32-bit key for pg_advisory_lock from a name. */
export function advisoryKey(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}
