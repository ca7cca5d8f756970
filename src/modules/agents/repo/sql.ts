// Raw SQL helpers shared by the agent server's repositories.
import { CompiledQuery } from 'kysely';
import type { Db, SqlExecutor } from '../../../platform/db/index.ts';

/** Runs fn in one short transaction; fn gets an executor bound to it. */
export async function inTransaction<T>(db: Db, fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
  return db.kysely.transaction().execute(async (trx) => fn({
    async query<R>(text: string, params: unknown[] = []) {
      return (await trx.executeQuery(CompiledQuery.raw(text, params))).rows as R[];
    },
  }));
}

/** Builds `WHERE` clauses with numbered parameters. */
export class Where {
  readonly clauses: string[] = [];
  readonly params: unknown[];
  constructor(params: unknown[] = []) {
    this.params = params;
  }
  /** Adds a parameter and returns its placeholder. */
  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }
  add(clause: string): void {
    this.clauses.push(clause);
  }
  toString(): string {
    return this.clauses.length ? `WHERE ${this.clauses.join(' AND ')}` : '';
  }
}

export function json(value: unknown): string {
  return JSON.stringify(value ?? {});
}

/** Column list for ORDER BY from a user's sort field, restricted to known columns. */
export function orderBy(sortBy: string | undefined, sortOrder: string | undefined, allowed: readonly string[], fallback: string): string {
  const column = sortBy && allowed.includes(sortBy) ? sortBy : fallback;
  const direction = sortOrder?.toLowerCase() === 'asc' ? 'ASC' : 'DESC';
  return `"${column}" ${direction}`;
}
