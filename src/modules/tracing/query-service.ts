// Run queries: POST /runs/query (project, ids, trace, parent, time window, filter / trace_filter /
// tree_filter, select) with keyset pagination on (start_time, id), and single runs by id.
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import { uuidErrorText } from '../../platform/http/validation/uuid-error.ts';
import { normalizeTime } from './ingest/times.ts';
import { compileFilter, FilterError, isBlankFilter, parseFilter } from './filter/index.ts';
import { QUERYABLE_FIELDS, selectList } from './run-fields.ts';

export interface RunQuery {
  session?: string[] | null;
  id?: string[] | null;
  trace?: string | null;
  parent_run?: string | null;
  reference_example?: string[] | null;
  run_type?: string | null;
  error?: boolean | null;
  is_root?: boolean | null;
  start_time?: string | null;
  end_time?: string | null;
  filter?: string | null;
  trace_filter?: string | null;
  tree_filter?: string | null;
  select?: string[] | null;
  limit: number;
  cursor?: string | null;
  order: 'asc' | 'desc';
}

export interface RunPage {
  runs: Record<string, unknown>[];
  cursors: { next: string | null; prev: string | null };
}

interface Cursor {
  t: string;
  i: string;
  o: 'asc' | 'desc';
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeCursor(text: string, order: 'asc' | 'desc'): Cursor {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Cursor;
    if (typeof value.t === 'string' && typeof value.i === 'string' && uuidErrorText(value.i) === null && value.o === order && normalizeTime(value.t) !== undefined) return value;
  } catch {
    // fall through
  }
  throw badRequest('Invalid cursor: pass cursors.next from the previous page of the same query (same order).');
}

/** Parses a filter for one of the query's filter fields; a bad one answers 400 naming the field and position. */
function filterPredicate(field: string, text: string | null | undefined, alias: string): RawBuilder<SqlBool> | undefined {
  if (isBlankFilter(text)) return undefined;
  try {
    return compileFilter(parseFilter(text!), { runAlias: alias });
  } catch (error) {
    if (error instanceof FilterError) throw badRequest(`${field}: ${error.message}`);
    throw error;
  }
}

export const DEFAULT_SELECT: readonly string[] = QUERYABLE_FIELDS;

export class RunQueryService {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async query(tenantId: string, query: RunQuery): Promise<RunPage> {
    const conditions: RawBuilder<SqlBool>[] = [sql<SqlBool>`r.tenant_id = ${tenantId}::uuid`];
    // One project (the common case) as an equality, so the (tenant, session, start_time, id) index also gives the order.
    if (query.session && query.session.length === 1) conditions.push(sql<SqlBool>`r.session_id = ${query.session[0]}::uuid`);
    else if (query.session && query.session.length > 1) conditions.push(sql<SqlBool>`r.session_id = ANY(${query.session}::uuid[])`);
    if (query.id && query.id.length > 0) conditions.push(sql<SqlBool>`r.id = ANY(${query.id}::uuid[])`);
    if (query.trace) conditions.push(sql<SqlBool>`r.trace_id = ${query.trace}::uuid`);
    if (query.parent_run) conditions.push(sql<SqlBool>`r.parent_run_id = ${query.parent_run}::uuid`);
    if (query.reference_example && query.reference_example.length > 0) conditions.push(sql<SqlBool>`r.reference_example_id = ANY(${query.reference_example}::uuid[])`);
    if (query.run_type) conditions.push(sql<SqlBool>`r.run_type = ${query.run_type}`);
    if (query.error === true) conditions.push(sql<SqlBool>`r.error IS NOT NULL`);
    if (query.error === false) conditions.push(sql<SqlBool>`r.error IS NULL`);
    if (query.is_root === true || query.is_root === false) conditions.push(sql<SqlBool>`r.is_root = ${query.is_root}`);
    if (query.start_time) conditions.push(sql<SqlBool>`r.start_time >= ${query.start_time}::timestamptz`);
    if (query.end_time) conditions.push(sql<SqlBool>`r.start_time < ${query.end_time}::timestamptz`);
    const filter = filterPredicate('filter', query.filter, 'r');
    if (filter) conditions.push(filter);
    const traceFilter = filterPredicate('trace_filter', query.trace_filter, 'tr');
    if (traceFilter) {
      conditions.push(sql<SqlBool>`EXISTS (SELECT 1 FROM runs tr WHERE tr.tenant_id = r.tenant_id AND tr.id = r.trace_id AND ${traceFilter})`);
    }
    const treeFilter = filterPredicate('tree_filter', query.tree_filter, 'tt');
    if (treeFilter) {
      conditions.push(sql<SqlBool>`EXISTS (SELECT 1 FROM runs tt WHERE tt.tenant_id = r.tenant_id AND tt.trace_id = r.trace_id AND ${treeFilter})`);
    }
    const descending = query.order === 'desc';
    if (query.cursor) {
      const cursor = decodeCursor(query.cursor, query.order);
      conditions.push(descending
        ? sql<SqlBool>`(r.start_time, r.id) < (${cursor.t}::timestamptz, ${cursor.i}::uuid)`
        : sql<SqlBool>`(r.start_time, r.id) > (${cursor.t}::timestamptz, ${cursor.i}::uuid)`);
    }
    const fields = [...new Set(['id', 'start_time', ...(query.select && query.select.length > 0 ? query.select : DEFAULT_SELECT)])];
    const direction = sql.raw(descending ? 'DESC' : 'ASC');
    const result = await sql<Record<string, unknown>>`SELECT ${selectList(fields, 'r')} FROM runs r
      WHERE ${sql.join(conditions, sql` AND `)}
      ORDER BY r.start_time ${direction}, r.id ${direction} LIMIT ${query.limit + 1}`.execute(this.#db.kysely);
    const rows = result.rows;
    const more = rows.length > query.limit;
    const runs = more ? rows.slice(0, query.limit) : rows;
    const last = runs.at(-1);
    const next = more && last ? encodeCursor({ t: last.start_time as string, i: last.id as string, o: query.order }) : null;
    return { runs, cursors: { next, prev: null } };
  }

  async get(tenantId: string, id: string): Promise<Record<string, unknown>> {
    const result = await sql<Record<string, unknown>>`SELECT ${selectList(DEFAULT_SELECT, 'r')},
        (SELECT coalesce(array_agg(c.id::text ORDER BY c.dotted_order), '{}') FROM runs c WHERE c.tenant_id = r.tenant_id AND c.parent_run_id = r.id) AS direct_child_run_ids
      FROM runs r WHERE r.tenant_id = ${tenantId}::uuid AND r.id = ${id}::uuid`.execute(this.#db.kysely);
    const row = result.rows[0];
    if (!row) throw notFound(`Run ${id} not found`);
    return row;
  }

  async attachment(tenantId: string, runId: string, name: string): Promise<{ mimeType: string; content: Buffer }> {
    const rows = await this.#db.query<{ mime_type: string; content: Uint8Array }>(
      'SELECT mime_type, content FROM run_attachments WHERE tenant_id = $1 AND run_id = $2 AND name = $3',
      [tenantId, runId, name],
    );
    if (!rows[0]) throw notFound(`Attachment ${name} of run ${runId} not found`);
    return { mimeType: rows[0].mime_type, content: Buffer.from(rows[0].content) };
  }
}
