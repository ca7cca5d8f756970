// The only SQL for threads.
import type { SqlExecutor } from '../../../platform/db/index.ts';
import { jsonContains } from '../json-contains.ts';
import { pack, PACK_FROM_BYTES, unpack } from '../packed.ts';
import { json, orderBy, Where } from './sql.ts';

export type ThreadStatus = 'idle' | 'busy' | 'interrupted' | 'error';

export interface ThreadRow {
  thread_id: string;
  created_at: string;
  updated_at: string;
  state_updated_at: string;
  metadata: Record<string, any>;
  status: ThreadStatus;
  values: Record<string, unknown> | null;
  interrupts: Record<string, unknown>;
  config: Record<string, unknown>;
  error: unknown;
}

export interface ThreadFilter {
  ids?: string[];
  metadata?: Record<string, unknown>;
  values?: Record<string, unknown>;
  status?: ThreadStatus;
}

const COLUMNS = 'thread_id, created_at, updated_at, state_updated_at, metadata, status, "values", values_packed, interrupts, config, error';
export const THREAD_SORT = ['thread_id', 'status', 'created_at', 'updated_at', 'state_updated_at'] as const;

type StoredThreadRow = ThreadRow & { values_packed: string | null };

/**
 * A thread's values as stored: [values (json text), values_packed] — packed from PACK_FROM_BYTES on (see
 * migration 0010). The parameters of every statement that writes them.
 */
export function storedValues(valuesJson: string): [string | null, string | null] {
  return valuesJson.length >= PACK_FROM_BYTES ? [null, pack(valuesJson)] : [valuesJson, null];
}

function unpacked({ values_packed: packed, ...row }: StoredThreadRow): ThreadRow {
  return packed === null ? row : { ...row, values: JSON.parse(unpack(packed).toString()) };
}

function hasValuesFilter(filter: ThreadFilter): filter is ThreadFilter & { values: Record<string, unknown> } {
  return filter.values !== undefined && Object.keys(filter.values).length > 0;
}

/** A `values` filter matches small values in SQL; packed ones are candidates, checked once read (jsonContains). */
function filterWhere(filter: ThreadFilter): Where {
  const where = new Where();
  if (filter.ids) where.add(`thread_id = ANY(${where.param(filter.ids)}::uuid[])`);
  if (filter.metadata && Object.keys(filter.metadata).length) where.add(`metadata @> ${where.param(json(filter.metadata))}::jsonb`);
  if (hasValuesFilter(filter)) where.add(`("values"::jsonb @> ${where.param(json(filter.values))}::jsonb OR values_packed IS NOT NULL)`);
  if (filter.status) where.add(`status = ${where.param(filter.status)}`);
  return where;
}

export class ThreadRepo {
  readonly #db: SqlExecutor;
  constructor(db: SqlExecutor) {
    this.#db = db;
  }

  async insert(threadId: string, metadata: Record<string, unknown>, tx: SqlExecutor = this.#db): Promise<ThreadRow | undefined> {
    const rows = await tx.query<StoredThreadRow>(
      `INSERT INTO agent_threads (thread_id, metadata) VALUES ($1, $2::jsonb) ON CONFLICT (thread_id) DO NOTHING RETURNING ${COLUMNS}`,
      [threadId, json(metadata)],
    );
    return rows[0] && unpacked(rows[0]);
  }

  async get(threadId: string, tx: SqlExecutor = this.#db): Promise<ThreadRow | undefined> {
    const rows = await tx.query<StoredThreadRow>(`SELECT ${COLUMNS} FROM agent_threads WHERE thread_id = $1`, [threadId]);
    return rows[0] && unpacked(rows[0]);
  }

  async lock(threadId: string, tx: SqlExecutor): Promise<ThreadRow | undefined> {
    const rows = await tx.query<StoredThreadRow>(`SELECT ${COLUMNS} FROM agent_threads WHERE thread_id = $1 FOR UPDATE`, [threadId]);
    return rows[0] && unpacked(rows[0]);
  }

  async mergeMetadata(threadId: string, metadata: Record<string, unknown>, tx: SqlExecutor = this.#db): Promise<ThreadRow | undefined> {
    const rows = await tx.query<StoredThreadRow>(
      `UPDATE agent_threads SET metadata = metadata || $2::jsonb, updated_at = now() WHERE thread_id = $1 RETURNING ${COLUMNS}`,
      [threadId, json(metadata)],
    );
    return rows[0] && unpacked(rows[0]);
  }

  /** Records the thread's state after a state update or a run (values, interrupts, status). */
  async setState(threadId: string, state: { values: unknown; interrupts: Record<string, unknown>; status: ThreadStatus; error?: unknown }, tx: SqlExecutor = this.#db): Promise<void> {
    await tx.query(
      `UPDATE agent_threads SET "values" = $2::json, values_packed = $3, interrupts = $4::jsonb, status = $5, error = $6::jsonb,
         updated_at = now(), state_updated_at = now() WHERE thread_id = $1`,
      [threadId, ...storedValues(JSON.stringify(state.values ?? null)), json(state.interrupts), state.status, state.error === undefined ? null : JSON.stringify(state.error)],
    );
  }

  async delete(threadId: string, tx: SqlExecutor = this.#db): Promise<boolean> {
    const rows = await tx.query(
      `WITH r AS (DELETE FROM agent_runs WHERE thread_id = $1), e AS (DELETE FROM agent_crons WHERE thread_id = $1)
       DELETE FROM agent_threads WHERE thread_id = $1 RETURNING 1`,
      [threadId],
    );
    return rows.length > 0;
  }

  async search(filter: ThreadFilter, page: { limit: number; offset: number; sortBy?: string; sortOrder?: string }): Promise<{ rows: ThreadRow[]; total: number }> {
    const where = filterWhere(filter);
    const order = `ORDER BY ${orderBy(page.sortBy, page.sortOrder, THREAD_SORT, 'created_at')}, thread_id`;
    if (hasValuesFilter(filter)) {
      // Packed values are checked once read, so the page is cut here: every candidate is read.
      const rows = await this.#db.query<StoredThreadRow>(`SELECT ${COLUMNS} FROM agent_threads ${where} ${order}`, where.params);
      const matching = rows.map(unpacked).filter((row) => jsonContains(row.values, filter.values));
      return { rows: matching.slice(page.offset, page.offset + page.limit), total: matching.length };
    }
    const limit = where.param(page.limit);
    const offset = where.param(page.offset);
    const rows = await this.#db.query<StoredThreadRow & { total: number }>(
      `SELECT ${COLUMNS}, count(*) OVER () AS total FROM agent_threads ${where} ${order} LIMIT ${limit} OFFSET ${offset}`,
      where.params,
    );
    const total = rows[0]?.total ?? (page.offset > 0 ? await this.count(filter) : 0);
    return { rows: rows.map(({ total: _t, ...row }) => unpacked(row)), total };
  }

  async count(filter: ThreadFilter): Promise<number> {
    // Packed values are matched once read: search counts them.
    if (hasValuesFilter(filter)) return (await this.search(filter, { limit: 0, offset: 0 })).total;
    const where = filterWhere(filter);
    const rows = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM agent_threads ${where}`, where.params);
    return rows[0]!.n;
  }

  async copy(fromId: string, toId: string, tx: SqlExecutor): Promise<ThreadRow | undefined> {
    const rows = await tx.query<StoredThreadRow>(
      `INSERT INTO agent_threads (thread_id, metadata, status, "values", values_packed, interrupts, config, error)
       SELECT $2, metadata, CASE WHEN status = 'busy' THEN 'idle' ELSE status END, "values", values_packed, interrupts, config, error
         FROM agent_threads WHERE thread_id = $1 RETURNING ${COLUMNS}`,
      [fromId, toId],
    );
    return rows[0] && unpacked(rows[0]);
  }
}
