// The worker's SQL: claiming runs under the concurrency limits, leases, checkpoints, outcomes, timeouts.
// Every time comes from the injected clock (`now`), so tests can move time instead of waiting.
import { sql, type Kysely } from 'kysely';
import type { Db } from '../../../platform/db/index.ts';
import type { ExportRow, RunRow, Tx } from '../exports-repo.ts';
import type { FileCheckpoint } from './run-executor.ts';

export interface ClaimLimits {
  maxRunsPerExport: number;
  maxExportsPerWorkspace: number;
  leaseSeconds: number;
}

export interface ClaimedRun {
  run: RunRow;
  export: ExportRow;
  /** The previous holder's lease ran out: it died or lost the database mid-run. */
  interrupted: boolean;
}

const CLAIM_LOCK = 'bulk_export_claim';
export const INTERRUPTED_MESSAGE = 'The worker running this run stopped responding (lease expired); resumed from the last checkpoint.';

export class WorkerRepo {
  readonly db: Kysely<any>;

  constructor(db: Db) {
    this.db = db.kysely;
  }

  /**
   * Takes the oldest runnable run (FIFO by export creation, then by day) whose export is below its run limit
   * and whose workspace is below its export limit. Claims are serialized by a transaction-scoped advisory lock so
   * that two processes cannot both take the last free slot.
   */
  async claim(owner: string, now: Date, limits: ClaimLimits): Promise<ClaimedRun | undefined> {
    const nowIso = now.toISOString();
    return this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtext(current_schema() || ${CLAIM_LOCK}))`.execute(trx);
      const picked = await sql<{ id: string; interrupted: boolean }>`
        WITH active AS (
          SELECT bulk_export_id, tenant_id, count(*) AS runs FROM bulk_export_runs
          WHERE lease_owner IS NOT NULL AND lease_expires_at > ${nowIso}::timestamptz
          GROUP BY bulk_export_id, tenant_id
        )
        SELECT r.id, (r.lease_owner IS NOT NULL) AS interrupted
        FROM bulk_export_runs r
        JOIN bulk_exports e ON e.id = r.bulk_export_id
        LEFT JOIN active a ON a.bulk_export_id = r.bulk_export_id
        WHERE r.status IN ('CREATED', 'RUNNING')
          AND r.available_at <= ${nowIso}::timestamptz
          AND (r.lease_owner IS NULL OR r.lease_expires_at <= ${nowIso}::timestamptz)
          AND e.status IN ('CREATED', 'RUNNING')
          AND e.not_before <= ${nowIso}::timestamptz
          AND coalesce(a.runs, 0) < ${limits.maxRunsPerExport}
          AND (a.runs IS NOT NULL OR (SELECT count(*) FROM active x WHERE x.tenant_id = r.tenant_id) < ${limits.maxExportsPerWorkspace})
        ORDER BY e.seq, r.start_time, r.id
        LIMIT 1
        FOR UPDATE OF r SKIP LOCKED`.execute(trx);
      const row = picked.rows[0];
      if (!row) return undefined;
      const leaseUntil = new Date(now.getTime() + limits.leaseSeconds * 1000).toISOString();
      // A run whose holder vanished was interrupted: that attempt counts (errors.retry_<n>), and this one resumes it.
      const run = await sql<RunRow>`UPDATE bulk_export_runs SET status = 'RUNNING', lease_owner = ${owner},
          retry_number = CASE WHEN lease_owner IS NULL THEN retry_number ELSE retry_number + 1 END,
          errors = CASE WHEN lease_owner IS NULL THEN errors
            ELSE errors || jsonb_build_object('retry_' || retry_number, ${INTERRUPTED_MESSAGE}::text) END,
          lease_expires_at = ${leaseUntil}::timestamptz, attempt_started_at = ${nowIso}::timestamptz, updated_at = now()
        WHERE id = ${row.id} RETURNING *`.execute(trx);
      const exp = await sql<ExportRow>`UPDATE bulk_exports SET status = 'RUNNING', started_at = coalesce(started_at, ${nowIso}::timestamptz),
          updated_at = now()
        WHERE id = ${run.rows[0]!.bulk_export_id} RETURNING *`.execute(trx);
      return { run: run.rows[0]!, export: exp.rows[0]!, interrupted: row.interrupted };
    });
  }

  /** Extends the lease; false when this worker no longer owns the run or its export stopped (cancel, failure, timeout). */
  async heartbeat(runId: string, owner: string, now: Date, leaseSeconds: number): Promise<boolean> {
    const leaseUntil = new Date(now.getTime() + leaseSeconds * 1000).toISOString();
    const result = await sql`UPDATE bulk_export_runs r SET lease_expires_at = ${leaseUntil}::timestamptz
      FROM bulk_exports e
      WHERE r.id = ${runId} AND r.lease_owner = ${owner} AND r.status = 'RUNNING' AND e.id = r.bulk_export_id AND e.status = 'RUNNING'`.execute(this.db);
    return Number(result.numAffectedRows ?? 0) > 0;
  }

  async recordUpload(runId: string, owner: string, upload: { upload_id: string; key: string }): Promise<boolean> {
    const result = await sql`UPDATE bulk_export_runs SET pending_upload = ${JSON.stringify(upload)}::jsonb, updated_at = now()
      WHERE id = ${runId} AND lease_owner = ${owner} AND status = 'RUNNING'`.execute(this.db);
    return Number(result.numAffectedRows ?? 0) > 0;
  }

  /** The checkpoint: cursor, row count and file list change together, in one statement. */
  async checkpoint(runId: string, owner: string, file: FileCheckpoint): Promise<boolean> {
    const result = await sql`UPDATE bulk_export_runs SET latest_cursor = ${JSON.stringify(file.cursor)}::jsonb,
        rows_written = rows_written + ${file.rows}, exported_files = array_append(exported_files, ${file.key}::text),
        pending_upload = NULL, updated_at = now()
      WHERE id = ${runId} AND lease_owner = ${owner} AND status = 'RUNNING'`.execute(this.db);
    return Number(result.numAffectedRows ?? 0) > 0;
  }

  async #lockExport(trx: Tx, exportId: string): Promise<ExportRow | undefined> {
    const result = await sql<ExportRow>`SELECT * FROM bulk_exports WHERE id = ${exportId} FOR UPDATE`.execute(trx);
    return result.rows[0];
  }

  /** Marks the run done; the export is COMPLETED when it was the last one. */
  async complete(runId: string, exportId: string, owner: string): Promise<{ exportCompleted: boolean }> {
    return this.db.transaction().execute(async (trx) => {
      await this.#lockExport(trx, exportId);
      const done = await sql`UPDATE bulk_export_runs SET status = 'COMPLETED', finished_at = now(), updated_at = now(), lease_owner = NULL,
          lease_expires_at = NULL, pending_upload = NULL
        WHERE id = ${runId} AND lease_owner = ${owner} AND status = 'RUNNING'`.execute(trx);
      if (Number(done.numAffectedRows ?? 0) === 0) return { exportCompleted: false };
      const finished = await sql`UPDATE bulk_exports SET status = 'COMPLETED', finished_at = now(), updated_at = now()
        WHERE id = ${exportId} AND status = 'RUNNING'
          AND NOT EXISTS (SELECT 1 FROM bulk_export_runs WHERE bulk_export_id = ${exportId} AND status <> 'COMPLETED')`.execute(trx);
      return { exportCompleted: Number(finished.numAffectedRows ?? 0) > 0 };
    });
  }

  /**
   * Records a failed attempt as errors.retry_<n>. A retryable failure with retries left waits `retryDelaySeconds`;
   * otherwise the run is FAILED, the export FAILED, and its other unfinished runs CANCELLED.
   */
  async fail(runId: string, exportId: string, owner: string | null, message: string, retry: { retryable: boolean; retryLimit: number; retryDelaySeconds: number; now: Date }): Promise<'retry' | 'failed' | 'gone'> {
    return this.db.transaction().execute(async (trx) => {
      const exp = await this.#lockExport(trx, exportId);
      const current = await sql<RunRow>`SELECT * FROM bulk_export_runs WHERE id = ${runId} FOR UPDATE`.execute(trx);
      const run = current.rows[0];
      if (!exp || !run || run.status !== 'RUNNING' || exp.status !== 'RUNNING') return 'gone';
      if (owner !== null && run.lease_owner !== owner) return 'gone';
      const errors = { ...run.errors, [`retry_${run.retry_number}`]: message };
      if (retry.retryable && run.retry_number < retry.retryLimit) {
        const availableAt = new Date(retry.now.getTime() + retry.retryDelaySeconds * 1000).toISOString();
        await sql`UPDATE bulk_export_runs SET retry_number = retry_number + 1, errors = ${JSON.stringify(errors)}::jsonb,
            available_at = ${availableAt}::timestamptz, lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
          WHERE id = ${runId}`.execute(trx);
        return 'retry';
      }
      await sql`UPDATE bulk_export_runs SET status = 'FAILED', errors = ${JSON.stringify(errors)}::jsonb, finished_at = now(),
          lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
        WHERE id = ${runId}`.execute(trx);
      await sql`UPDATE bulk_exports SET status = 'FAILED', finished_at = now(), updated_at = now() WHERE id = ${exportId}`.execute(trx);
      await sql`UPDATE bulk_export_runs SET status = 'CANCELLED', finished_at = now(), lease_owner = NULL, lease_expires_at = NULL,
          updated_at = now()
        WHERE bulk_export_id = ${exportId} AND status IN ('CREATED', 'RUNNING')`.execute(trx);
      return 'failed';
    });
  }

  /** Gives a run back without counting an attempt (orderly shutdown). */
  async release(runId: string, owner: string): Promise<void> {
    await sql`UPDATE bulk_export_runs SET lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
      WHERE id = ${runId} AND lease_owner = ${owner}`.execute(this.db);
  }

  /** Exports past the workflow timeout become TIMEDOUT (not retried); returns their ids. */
  async timeOutExports(now: Date, workflowTimeoutSeconds: number): Promise<string[]> {
    const cutoff = new Date(now.getTime() - workflowTimeoutSeconds * 1000).toISOString();
    return this.db.transaction().execute(async (trx) => {
      const expired = await sql<{ id: string }>`UPDATE bulk_exports SET status = 'TIMEDOUT', finished_at = now(), updated_at = now()
        WHERE status = 'RUNNING' AND interval_hours IS NULL AND started_at <= ${cutoff}::timestamptz RETURNING id`.execute(trx);
      const ids = expired.rows.map((row) => row.id);
      if (ids.length > 0) {
        await sql`UPDATE bulk_export_runs SET status = 'TIMEDOUT', finished_at = now(), lease_owner = NULL, lease_expires_at = NULL,
            updated_at = now()
          WHERE bulk_export_id = ANY(${ids}::uuid[]) AND status IN ('CREATED', 'RUNNING')`.execute(trx);
      }
      return ids;
    });
  }
}
