// Keyset scans over one project's runs in a start_time window: the read path of bulk export.
import { sql, type SqlBool } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import { compileFilter, isBlankFilter, parseFilter } from './filter/index.ts';
import { EXPORTABLE_FIELDS, selectList } from './run-fields.ts';

export interface RunScanRequest {
  tenantId: string;
  sessionId: string;
  /** ISO; inclusive, compared with the run's start_time. */
  startTime: string;
  /** ISO; exclusive. */
  endTime: string;
  /** Filter language; callers validate it with parseFilter first (a FilterError is thrown otherwise). */
  filter?: string | null;
  /** Subset of EXPORTABLE_FIELDS: only these are read. */
  fields: readonly string[];
  /** Keyset cursor, exclusive. */
  after?: { start_time: string; id: string } | null;
  limit: number;
}

export interface ScannedRun {
  [field: string]: unknown;
  start_time: string;
  id: string;
}

export class RunScanner {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** One page of runs ordered by (start_time, id); pass the last row's start_time and id as `after` for the next. */
  async scan(req: RunScanRequest): Promise<ScannedRun[]> {
    const unknown = req.fields.filter((field) => !EXPORTABLE_FIELDS.includes(field));
    if (unknown.length > 0) throw new TypeError(`RunScanner: not exportable fields: ${unknown.join(', ')}`);
    if (!Number.isInteger(req.limit) || req.limit < 1) throw new TypeError('RunScanner: limit must be a positive integer');
    const fields = [...new Set(['start_time', 'id', ...req.fields])];
    const conditions = [
      sql<SqlBool>`r.tenant_id = ${req.tenantId}::uuid`,
      sql<SqlBool>`r.session_id = ${req.sessionId}::uuid`,
      sql<SqlBool>`r.start_time >= ${req.startTime}::timestamptz`,
      sql<SqlBool>`r.start_time < ${req.endTime}::timestamptz`,
    ];
    if (req.after) conditions.push(sql<SqlBool>`(r.start_time, r.id) > (${req.after.start_time}::timestamptz, ${req.after.id}::uuid)`);
    if (!isBlankFilter(req.filter)) conditions.push(compileFilter(parseFilter(req.filter!), { runAlias: 'r' }));
    const query = sql<ScannedRun>`SELECT ${selectList(fields, 'r')} FROM runs r
      WHERE ${sql.join(conditions, sql` AND `)}
      ORDER BY r.start_time, r.id LIMIT ${req.limit}`;
    const result = await query.execute(this.#db.kysely);
    return result.rows;
  }
}
