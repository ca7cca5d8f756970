// The only SQL for runs and the durable run queue.
import { prepared, type SqlExecutor } from '../../../platform/db/index.ts';
import { json, Where } from './sql.ts';
import { storedValues, type ThreadStatus } from './threads.ts';
import type { WebhookDelivery } from '../webhooks.ts';
import { insertRowsCtes, latestCheckpointSql, type CheckpointRow, type HeldRowsParams } from '../checkpointer.ts';

export type RunStatus = 'pending' | 'running' | 'success' | 'error' | 'timeout' | 'interrupted';
export type MultitaskStrategy = 'reject' | 'interrupt' | 'rollback' | 'enqueue';
export type CancelAction = 'interrupt' | 'rollback';

export interface RunKwargs {
  input?: unknown;
  command?: { update?: unknown; resume?: unknown; goto?: unknown } | null;
  config: { configurable?: Record<string, unknown>; tags?: string[]; recursion_limit?: number; metadata?: Record<string, unknown>; [key: string]: unknown };
  context?: Record<string, unknown>;
  stream_mode: string[];
  interrupt_before?: string[] | '*';
  interrupt_after?: string[] | '*';
  subgraphs: boolean;
  resumable: boolean;
  temporary: boolean;
  checkpoint_id?: string;
  checkpoint?: Record<string, unknown>;
  feedback_keys?: string[];
  webhook?: string;
  durability?: string;
  [key: string]: unknown;
}

export interface RunRow {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  status: RunStatus;
  metadata: Record<string, unknown>;
  kwargs: RunKwargs;
  multitask_strategy: MultitaskStrategy;
  attempt: number;
  worker_id: string | null;
  cancel_action: CancelAction | null;
  webhook: string | null;
  created_at: string;
  updated_at: string;
}

const COLUMNS = 'run_id, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy, attempt, worker_id, cancel_action, webhook, created_at, updated_at';
const R_COLUMNS = COLUMNS.split(', ').map((column) => `agent_runs.${column}`).join(', ');

export interface NewRun {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  metadata: Record<string, unknown>;
  kwargs: RunKwargs;
  multitask_strategy: MultitaskStrategy;
  after_seconds: number;
  webhook: string | null;
}

export interface FinalThreadState {
  values: unknown;
  /** The values as JSON text already (saves serializing a large state twice). */
  valuesJson?: string;
  interrupts: Record<string, unknown>;
  status: ThreadStatus;
  error?: unknown;
}

export class RunRepo {
  readonly #db: SqlExecutor;
  constructor(db: SqlExecutor) {
    this.#db = db;
  }

  async inflight(threadId: string, tx: SqlExecutor): Promise<Pick<RunRow, 'run_id' | 'status'>[]> {
    return tx.query(`SELECT run_id, status FROM agent_runs WHERE thread_id = $1 AND status IN ('pending', 'running') ORDER BY created_at`, [threadId]);
  }

  /** Inserts the run and marks its thread busy (creating a temporary thread first when asked). */
  async insert(run: NewRun, options: { createThread?: Record<string, unknown>; ownedBy?: { workerId: string; leaseSeconds: number } }, tx: SqlExecutor = this.#db): Promise<RunRow> {
    const rows = await tx.query<RunRow>(
      prepared(`WITH t0 AS (INSERT INTO agent_threads (thread_id, metadata) SELECT $2, $10::jsonb WHERE $10::jsonb IS NOT NULL ON CONFLICT DO NOTHING),
       r AS (
         INSERT INTO agent_runs (run_id, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy, available_at, webhook,
                                 attempt, worker_id, lease_expires_at)
         VALUES ($1, $2, $3, CASE WHEN $11::text IS NULL THEN 'pending' ELSE 'running' END, $4::jsonb, $5::jsonb, $6,
                 now() + $7::float8 * interval '1 second', $8,
                 CASE WHEN $11::text IS NULL THEN 0 ELSE 1 END, $11::text,
                 CASE WHEN $11::text IS NULL THEN NULL ELSE now() + $12::float8 * interval '1 second' END)
         RETURNING ${COLUMNS}),
       t AS (UPDATE agent_threads SET status = 'busy', updated_at = now(), metadata = metadata || $9::jsonb WHERE thread_id = $2)
       SELECT * FROM r`),
      [run.run_id, run.thread_id, run.assistant_id, json(run.metadata), json(run.kwargs), run.multitask_strategy, run.after_seconds,
        run.webhook, json({ graph_id: run.kwargs.config.configurable?.graph_id, assistant_id: run.assistant_id }),
        options.createThread ? json(options.createThread) : null, options.ownedBy?.workerId ?? null, options.ownedBy?.leaseSeconds ?? 0],
    );
    return rows[0]!;
  }

  /**
   * The common case in one statement: queue the run only if its thread exists and is not busy (and, when
   * asked, read the thread's latest checkpoint, the run's first read, in the same statement). The thread's
   * status is the compare-and-set (a concurrent insert that committed first made it busy, and PostgreSQL
   * re-checks the row after waiting for its lock). Undefined means "not that simple": take the full path.
   */
  async insertIfIdle(run: NewRun, ownedBy: { workerId: string; leaseSeconds: number } | undefined, options: { readLatestCheckpoint?: boolean } = {}): Promise<(RunRow & { latest_checkpoint?: CheckpointRow | null }) | undefined> {
    const rows = await this.#db.query<RunRow & { latest_checkpoint?: CheckpointRow | null }>(
      prepared(`WITH t AS (
         UPDATE agent_threads SET status = 'busy', updated_at = now(), metadata = metadata || $9::jsonb
          WHERE thread_id = $2 AND status <> 'busy' RETURNING thread_id)
       INSERT INTO agent_runs (run_id, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy, available_at, webhook,
                               attempt, worker_id, lease_expires_at)
       SELECT $1, t.thread_id, $3, CASE WHEN $10::text IS NULL THEN 'pending' ELSE 'running' END, $4::jsonb, $5::jsonb, $6,
              now() + $7::float8 * interval '1 second', $8,
              CASE WHEN $10::text IS NULL THEN 0 ELSE 1 END, $10::text,
              CASE WHEN $10::text IS NULL THEN NULL ELSE now() + $11::float8 * interval '1 second' END
         FROM t
       RETURNING ${COLUMNS}, CASE WHEN $12 THEN ${latestCheckpointSql('$2::text')} END AS latest_checkpoint`),
      [run.run_id, run.thread_id, run.assistant_id, json(run.metadata), json(run.kwargs), run.multitask_strategy, run.after_seconds,
        run.webhook, json({ graph_id: run.kwargs.config.configurable?.graph_id, assistant_id: run.assistant_id }),
        ownedBy?.workerId ?? null, ownedBy?.leaseSeconds ?? 0, options.readLatestCheckpoint === true],
    );
    return rows[0];
  }

  /** Claims the oldest runnable run: FIFO per thread, never two running runs on one thread. */
  async claim(workerId: string, leaseSeconds: number): Promise<RunRow | undefined> {
    const rows = await this.#db.query<RunRow>(
      prepared(`WITH next AS (
         SELECT r.run_id FROM agent_runs r
          WHERE r.status = 'pending' AND r.available_at <= now()
            AND NOT EXISTS (SELECT 1 FROM agent_runs o WHERE o.thread_id = r.thread_id AND o.status = 'running')
            AND NOT EXISTS (SELECT 1 FROM agent_runs p WHERE p.thread_id = r.thread_id AND p.status = 'pending' AND p.created_at < r.created_at)
          ORDER BY r.created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
       UPDATE agent_runs SET status = 'running', attempt = attempt + 1, worker_id = $1,
         lease_expires_at = now() + $2::float8 * interval '1 second', updated_at = now()
       FROM next WHERE agent_runs.run_id = next.run_id RETURNING ${R_COLUMNS}`),
      [workerId, leaseSeconds],
    );
    return rows[0];
  }

  /** Seconds until the next delayed run becomes runnable, if any. */
  async nextAvailableIn(): Promise<number | undefined> {
    const rows = await this.#db.query<{ s: number | null }>(
      `SELECT extract(epoch FROM min(available_at) - now())::float8 AS s FROM agent_runs WHERE status = 'pending' AND available_at > now()`,
    );
    return rows[0]?.s ?? undefined;
  }

  /** Extends the leases of this worker's runs; returns the cancel requests among them. */
  async heartbeat(workerId: string, runIds: string[], leaseSeconds: number): Promise<{ run_id: string; cancel_action: CancelAction | null }[]> {
    if (runIds.length === 0) return [];
    return this.#db.query(
      prepared(`UPDATE agent_runs SET lease_expires_at = now() + $3::float8 * interval '1 second'
        WHERE run_id = ANY($2::uuid[]) AND worker_id = $1 AND status = 'running' RETURNING run_id, cancel_action`),
      [workerId, runIds, leaseSeconds],
    );
  }

  /** Runs whose worker died: back to pending (resumed from their last checkpoint), or failed after too many attempts. */
  async recoverExpired(maxAttempts: number): Promise<{ requeued: string[]; failed: string[] }> {
    const rows = await this.#db.query<{ run_id: string; status: RunStatus; thread_id: string }>(
      `WITH dead AS (
         SELECT run_id FROM agent_runs WHERE status = 'running' AND lease_expires_at < now() FOR UPDATE SKIP LOCKED),
       upd AS (
         UPDATE agent_runs r SET status = CASE WHEN r.attempt >= $1 THEN 'error' ELSE 'pending' END,
           worker_id = NULL, lease_expires_at = NULL, available_at = now(), updated_at = now()
         FROM dead WHERE r.run_id = dead.run_id RETURNING r.run_id, r.status, r.thread_id),
       t AS (
         UPDATE agent_threads t SET status = 'error', updated_at = now(), error = '{"error":"RunAttemptsExhausted","message":"The run failed too many times"}'::jsonb
           FROM upd WHERE upd.status = 'error' AND t.thread_id = upd.thread_id)
       SELECT run_id, status, thread_id FROM upd`,
      [maxAttempts],
    );
    return {
      requeued: rows.filter((row) => row.status === 'pending').map((row) => row.run_id),
      failed: rows.filter((row) => row.status === 'error').map((row) => row.run_id),
    };
  }

  /**
   * Ends a run and records its thread's state (the checkpoints and writes it held, its webhook's delivery)
   * in one statement. The thread stays busy while other runs wait.
   * `mine` is false when the run was no longer this worker's (it was recovered elsewhere); `queued` tells
   * that runs of the thread wait for this one (the worker then looks for work).
   */
  async finish(runId: string, workerId: string, status: RunStatus, thread: FinalThreadState | undefined, extra: {
    webhook?: WebhookDelivery;
    /** The run's checkpoints and writes held back to be written here (see CheckpointHold). */
    held?: HeldRowsParams;
  } = {}): Promise<{ mine: boolean; queued: boolean }> {
    const { webhook, held } = extra;
    const [values, valuesPacked] = storedValues(thread?.valuesJson ?? JSON.stringify(thread?.values ?? null));
    const rows = await this.#db.query<{ thread_status: string | null }>(
      prepared(`WITH r AS (
         UPDATE agent_runs SET status = $3, updated_at = now(), lease_expires_at = NULL, cancel_action = NULL
          WHERE run_id = $1 AND worker_id = $2 AND status = 'running' RETURNING thread_id),
       t AS (
         UPDATE agent_threads t SET
           "values" = CASE WHEN $4 THEN $5::json ELSE t."values" END,
           values_packed = CASE WHEN $4 THEN $13 ELSE t.values_packed END,
           interrupts = CASE WHEN $4 THEN $6::jsonb ELSE t.interrupts END,
           error = CASE WHEN $4 THEN $8::jsonb ELSE t.error END,
           status = CASE WHEN EXISTS (SELECT 1 FROM agent_runs p WHERE p.thread_id = t.thread_id AND p.status = 'pending') THEN 'busy' ELSE $7 END,
           updated_at = now(), state_updated_at = CASE WHEN $4 THEN now() ELSE t.state_updated_at END
         FROM r WHERE t.thread_id = r.thread_id RETURNING t.status),
       w AS (
         INSERT INTO agent_webhook_deliveries (delivery_id, run_id, url, payload)
         SELECT gen_random_uuid(), $1, $9, $10 FROM r WHERE $9::text IS NOT NULL),
       ${insertRowsCtes('$11', '$12', 'r')}
       SELECT (SELECT status FROM t) AS thread_status FROM r`),
      [runId, workerId, status, thread !== undefined, values, json(thread?.interrupts),
        thread?.status ?? 'idle', thread?.error === undefined ? null : JSON.stringify(thread.error), webhook?.url ?? null, webhook?.payload ?? null,
        ...(held ?? [null, null]), valuesPacked],
    );
    return { mine: rows.length > 0, queued: rows[0]?.thread_status === 'busy' };
  }

  /** Marks runs cancelled: pending ones end at once (or are deleted on rollback); running ones get a request. */
  async requestCancel(runIds: string[], action: CancelAction, tx: SqlExecutor = this.#db): Promise<{ running: string[]; ended: string[]; threads: string[] }> {
    if (runIds.length === 0) return { running: [], ended: [], threads: [] };
    const pending = action === 'rollback'
      ? `DELETE FROM agent_runs WHERE run_id = ANY($1::uuid[]) AND status = 'pending' RETURNING run_id, thread_id, 'pending' AS was`
      : `UPDATE agent_runs SET status = 'interrupted', updated_at = now() WHERE run_id = ANY($1::uuid[]) AND status = 'pending' RETURNING run_id, thread_id, 'pending' AS was`;
    const rows = await tx.query<{ run_id: string; thread_id: string; was: string }>(
      `WITH p AS (${pending}),
       r AS (UPDATE agent_runs SET cancel_action = $2, updated_at = now() WHERE run_id = ANY($1::uuid[]) AND status = 'running'
             RETURNING run_id, thread_id, 'running' AS was)
       SELECT * FROM p UNION ALL SELECT * FROM r`,
      [runIds, action],
    );
    const pendingThreads = [...new Set(rows.filter((row) => row.was === 'pending').map((row) => row.thread_id))];
    if (pendingThreads.length > 0) {
      // A thread whose only work was the cancelled pending runs is idle again.
      await tx.query(
        `UPDATE agent_threads t SET status = 'idle', updated_at = now() WHERE thread_id = ANY($1::uuid[]) AND status = 'busy'
           AND NOT EXISTS (SELECT 1 FROM agent_runs p WHERE p.thread_id = t.thread_id AND p.status IN ('pending', 'running'))`,
        [pendingThreads],
      );
    }
    return {
      running: rows.filter((row) => row.was === 'running').map((row) => row.run_id),
      ended: rows.filter((row) => row.was === 'pending').map((row) => row.run_id),
      threads: [...new Set(rows.map((row) => row.thread_id))] };
  }

  async hasCheckpoints(threadId: string, runId: string): Promise<boolean> {
    const rows = await this.#db.query(`SELECT 1 FROM agent_checkpoints WHERE thread_id = $1 AND metadata->>'run_id' = $2 LIMIT 1`, [threadId, runId]);
    return rows.length > 0;
  }

  /** Recomputes busy/idle for a thread whose run went away (rollback). */
  async settleThread(threadId: string): Promise<void> {
    await this.#db.query(
      `UPDATE agent_threads t SET status = CASE
          WHEN EXISTS (SELECT 1 FROM agent_runs p WHERE p.thread_id = t.thread_id AND p.status IN ('pending', 'running')) THEN 'busy'
          WHEN t.status = 'busy' THEN 'idle' ELSE t.status END, updated_at = now()
        WHERE thread_id = $1`,
      [threadId],
    );
  }

  /** A worker that stops gracefully hands its runs back to the queue at once. */
  async release(workerId: string, runIds: string[]): Promise<void> {
    if (runIds.length === 0) return;
    await this.#db.query(
      `UPDATE agent_runs SET status = 'pending', worker_id = NULL, lease_expires_at = NULL, available_at = now(), updated_at = now()
        WHERE run_id = ANY($2::uuid[]) AND worker_id = $1 AND status = 'running'`,
      [workerId, runIds],
    );
  }

  async get(runId: string, threadId?: string): Promise<RunRow | undefined> {
    const rows = threadId
      ? await this.#db.query<RunRow>(prepared(`SELECT ${COLUMNS} FROM agent_runs WHERE run_id = $1 AND thread_id = $2`), [runId, threadId])
      : await this.#db.query<RunRow>(prepared(`SELECT ${COLUMNS} FROM agent_runs WHERE run_id = $1`), [runId]);
    return rows[0];
  }

  async list(threadId: string, options: { limit: number; offset: number; status?: string }): Promise<RunRow[]> {
    const where = new Where([threadId]);
    where.add('thread_id = $1');
    if (options.status) where.add(`status = ${where.param(options.status)}`);
    return this.#db.query<RunRow>(
      `SELECT ${COLUMNS} FROM agent_runs ${where} ORDER BY created_at DESC LIMIT ${where.param(options.limit)} OFFSET ${where.param(options.offset)}`,
      where.params,
    );
  }

  async delete(runId: string, threadId?: string): Promise<boolean> {
    const rows = await this.#db.query(
      `WITH e AS (DELETE FROM agent_run_events WHERE run_id = $1) DELETE FROM agent_runs WHERE run_id = $1 ${threadId ? 'AND thread_id = $2' : ''} RETURNING 1`,
      threadId ? [runId, threadId] : [runId],
    );
    return rows.length > 0;
  }

  /** Selects runs for bulk cancel. */
  async select(filter: { threadId?: string; runIds?: string[]; statuses: RunStatus[] }): Promise<Pick<RunRow, 'run_id' | 'thread_id' | 'status'>[]> {
    const where = new Where();
    where.add(`status = ANY(${where.param(filter.statuses)}::text[])`);
    if (filter.threadId) where.add(`thread_id = ${where.param(filter.threadId)}`);
    if (filter.runIds) where.add(`run_id = ANY(${where.param(filter.runIds)}::uuid[])`);
    return this.#db.query(`SELECT run_id, thread_id, status FROM agent_runs ${where}`, where.params);
  }

  async appendEvents(runId: string, events: { seq: number; event: string; data: string }[]): Promise<void> {
    if (events.length === 0) return;
    const params: unknown[] = [runId];
    const values = events.map((event) => {
      params.push(event.seq, event.event, event.data);
      return `($1, $${params.length - 2}, $${params.length - 1}, $${params.length})`;
    });
    await this.#db.query(`INSERT INTO agent_run_events (run_id, seq, event, data) VALUES ${values.join(', ')} ON CONFLICT DO NOTHING`, params);
  }

  async events(runId: string, afterSeq: number): Promise<{ seq: number; event: string; data: string }[]> {
    return this.#db.query(`SELECT seq, event, data FROM agent_run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq`, [runId, afterSeq]);
  }
}
