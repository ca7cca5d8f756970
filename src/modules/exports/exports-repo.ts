// The only SQL about exports and their runs on the API side (the worker's claim/checkpoint SQL is in worker/).
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import type { Compression, ExportStatus, FormatVersion } from './schemas.ts';

export interface ExportRow {
  id: string;
  tenant_id: string;
  bulk_export_destination_id: string;
  session_id: string;
  start_time: string;
  end_time: string | null;
  filter: string | null;
  format: 'Parquet';
  format_version: FormatVersion;
  compression: Compression;
  interval_hours: number | null;
  export_fields: string[] | null;
  source_bulk_export_id: string | null;
  status: ExportStatus;
  not_before: string;
  started_at: string | null;
  next_window_start: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface ExportProgress {
  runs_total: number;
  runs_completed: number;
  rows_written: number;
  files_written: number;
}

export interface RunRow {
  id: string;
  bulk_export_id: string;
  tenant_id: string;
  status: ExportStatus;
  start_time: string;
  end_time: string;
  prefix: string;
  retry_number: number;
  errors: Record<string, string>;
  rows_written: number;
  exported_files: string[];
  latest_cursor: { start_time: string; id: string } | null;
  pending_upload: { upload_id: string; key: string } | null;
  available_at: string;
  lease_owner: string | null;
  lease_expires_at: string | null;
  attempt_started_at: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export type NewExport = Omit<ExportRow, 'created_at' | 'updated_at' | 'finished_at' | 'started_at'>;
export type NewRun = Pick<RunRow, 'id' | 'bulk_export_id' | 'tenant_id' | 'status' | 'start_time' | 'end_time' | 'prefix' | 'available_at'>;

const EXPORT_COLUMNS = sql.raw(`e.id, e.tenant_id, e.bulk_export_destination_id, e.session_id, e.start_time, e.end_time, e.filter, e.format,
  e.format_version, e.compression, e.interval_hours, e.export_fields, e.source_bulk_export_id, e.status, e.not_before, e.started_at,
  e.next_window_start, e.created_at, e.updated_at, e.finished_at`);

export type Tx = Transaction<any>;

export class ExportsRepo {
  readonly db: Kysely<any>;

  constructor(db: Db) {
    this.db = db.kysely;
  }

  transaction<T>(fn: (trx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(fn);
  }

  async insertExport(trx: Tx, row: NewExport): Promise<ExportRow | undefined> {
    const result = await sql<ExportRow>`INSERT INTO bulk_exports AS e (id, tenant_id, bulk_export_destination_id, session_id, start_time, end_time,
        filter, format, format_version, compression, interval_hours, export_fields, source_bulk_export_id, status, not_before, next_window_start)
      VALUES (${row.id}, ${row.tenant_id}, ${row.bulk_export_destination_id}, ${row.session_id}, ${row.start_time}::timestamptz,
        ${row.end_time}::timestamptz, ${row.filter}, ${row.format}, ${row.format_version}, ${row.compression}, ${row.interval_hours},
        ${row.export_fields}::text[], ${row.source_bulk_export_id}, ${row.status}, ${row.not_before}::timestamptz,
        ${row.next_window_start}::timestamptz)
      ON CONFLICT DO NOTHING
      RETURNING ${EXPORT_COLUMNS}`.execute(trx);
    return result.rows[0];
  }

  async insertRuns(trx: Tx, runs: NewRun[]): Promise<void> {
    if (runs.length === 0) return;
    await trx.insertInto('bulk_export_runs').values(runs.map((run) => ({ ...run }))).execute();
  }

  /** Normalizes ISO input to the database's timestamp text (microseconds, +00:00). */
  async normalizeTimes(times: string[]): Promise<string[]> {
    const result = await sql<{ t: string }>`SELECT unnest(${times}::timestamptz[]) AS t`.execute(this.db);
    return result.rows.map((row) => row.t);
  }

  async getExport(tenantId: string, id: string, trx?: Tx): Promise<ExportRow | undefined> {
    const lock = trx ? sql` FOR UPDATE` : sql``;
    const result = await sql<ExportRow>`SELECT ${EXPORT_COLUMNS} FROM bulk_exports e WHERE e.tenant_id = ${tenantId} AND e.id = ${id}${lock}`.execute(trx ?? this.db);
    return result.rows[0];
  }

  async listExports(tenantId: string): Promise<ExportRow[]> {
    const result = await sql<ExportRow>`SELECT ${EXPORT_COLUMNS} FROM bulk_exports e WHERE e.tenant_id = ${tenantId}
      ORDER BY e.created_at DESC, e.seq DESC`.execute(this.db);
    return result.rows;
  }

  async progress(exportIds: string[]): Promise<Map<string, ExportProgress>> {
    const map = new Map<string, ExportProgress>();
    if (exportIds.length === 0) return map;
    const result = await sql<{ bulk_export_id: string } & ExportProgress>`SELECT bulk_export_id,
        count(*)::int AS runs_total, count(*) FILTER (WHERE status = 'COMPLETED')::int AS runs_completed,
        coalesce(sum(rows_written), 0)::bigint AS rows_written, coalesce(sum(cardinality(exported_files)), 0)::bigint AS files_written
      FROM bulk_export_runs WHERE bulk_export_id = ANY(${exportIds}::uuid[]) GROUP BY bulk_export_id`.execute(this.db);
    for (const row of result.rows) {
      map.set(row.bulk_export_id, { runs_total: row.runs_total, runs_completed: row.runs_completed, rows_written: Number(row.rows_written), files_written: Number(row.files_written) });
    }
    return map;
  }

  async listRuns(tenantId: string, exportId: string): Promise<RunRow[]> {
    return await this.db.selectFrom('bulk_export_runs').selectAll()
      .where('tenant_id', '=', tenantId).where('bulk_export_id', '=', exportId)
      .orderBy('start_time').orderBy('id').execute() as RunRow[];
  }

  async getRun(tenantId: string, exportId: string, runId: string): Promise<RunRow | undefined> {
    return await this.db.selectFrom('bulk_export_runs').selectAll()
      .where('tenant_id', '=', tenantId).where('bulk_export_id', '=', exportId).where('id', '=', runId)
      .executeTakeFirst() as RunRow | undefined;
  }

  /** Final state for the export and every unfinished run of it. */
  async finishExport(trx: Tx, exportId: string, status: ExportStatus, runStatus: ExportStatus): Promise<void> {
    await sql`UPDATE bulk_exports SET status = ${status}, finished_at = now(), updated_at = now()
      WHERE id = ${exportId} AND status IN ('CREATED', 'RUNNING')`.execute(trx);
    await sql`UPDATE bulk_export_runs SET status = ${runStatus}, finished_at = now(), updated_at = now(), lease_owner = NULL,
        lease_expires_at = NULL
      WHERE bulk_export_id = ${exportId} AND status IN ('CREATED', 'RUNNING')`.execute(trx);
  }
}
