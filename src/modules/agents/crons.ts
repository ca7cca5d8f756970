// Crons: runs on a schedule, for a thread or stateless. Each due cron is claimed with FOR UPDATE SKIP
// LOCKED and moved to its next date in the same statement, so several processes never fire it twice.
import { randomUUID } from 'node:crypto';
import { CronExpressionParser } from 'cron-parser';
import type { Logger } from 'pino';
import type { Db } from '../../platform/db/index.ts';
import type { EventBus } from '../../platform/events/event-bus.ts';
import { InputValidationError, notFound } from '../../platform/errors.ts';
import type { AssistantService } from './assistants.ts';
import type { RunCreate, RunService } from './runs.ts';
import { json, orderBy, Where } from './repo/sql.ts';

export interface CronRow {
  cron_id: string;
  assistant_id: string;
  thread_id: string | null;
  on_run_completed: string | null;
  end_time: string | null;
  schedule: string;
  timezone: string | null;
  created_at: string;
  updated_at: string;
  payload: Record<string, unknown>;
  user_id: string | null;
  next_run_date: string | null;
  metadata: Record<string, unknown>;
  enabled: boolean;
}

export interface CronBody extends Partial<RunCreate> {
  schedule?: string;
  timezone?: string | null;
  end_time?: string | null;
  enabled?: boolean;
  on_run_completed?: 'delete' | 'keep';
}

const COLUMNS = 'cron_id, assistant_id, thread_id, on_run_completed, end_time, schedule, timezone, created_at, updated_at, payload, user_id, next_run_date, metadata, enabled';
const SORT = ['cron_id', 'assistant_id', 'thread_id', 'created_at', 'updated_at', 'next_run_date'] as const;
const TOPIC_CRONS = 'agents:crons';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PAYLOAD_KEYS = ['input', 'config', 'context', 'interrupt_before', 'interrupt_after', 'webhook', 'multitask_strategy', 'durability',
  'stream_mode', 'stream_subgraphs', 'stream_resumable', 'checkpoint_during'] as const;

/** The next time a schedule fires after `from`, or a 422 naming the bad field. */
export function nextRunDate(schedule: string, timezone: string | null | undefined, from = new Date()): Date {
  try {
    return CronExpressionParser.parse(schedule, { currentDate: from, tz: timezone ?? 'UTC' }).next().toDate();
  } catch (error) {
    throw new InputValidationError([{ type: 'value_error', loc: ['body', 'schedule'], msg: `Value error, invalid cron schedule: ${(error as Error).message}`, input: schedule, ctx: { error: (error as Error).message } }]);
  }
}

function pickPayload(body: CronBody): Record<string, unknown> {
  return Object.fromEntries(PAYLOAD_KEYS.filter((key) => body[key] !== undefined && body[key] !== null).map((key) => [key, body[key]]));
}

export class CronService {
  readonly #db: Db;
  readonly #runs: RunService;
  readonly #assistants: AssistantService;
  bus: EventBus | undefined;

  constructor(db: Db, runs: RunService, assistants: AssistantService) {
    this.#db = db;
    this.#runs = runs;
    this.#assistants = assistants;
  }

  async create(threadId: string | undefined, body: CronBody & { schedule: string; assistant_id: string }): Promise<CronRow> {
    const assistant = await this.#assistants.getForRun(body.assistant_id);
    if (threadId !== undefined) {
      const rows = UUID.test(threadId) ? await this.#db.query(`SELECT 1 FROM agent_threads WHERE thread_id = $1`, [threadId]) : [];
      if (rows.length === 0) throw notFound(`Thread with ID ${threadId} not found`);
    }
    const next = nextRunDate(body.schedule, body.timezone);
    const rows = await this.#db.query<CronRow>(
      `INSERT INTO agent_crons (cron_id, assistant_id, thread_id, schedule, timezone, payload, metadata, enabled, on_run_completed, end_time, next_run_date)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9, $10, $11) RETURNING ${COLUMNS}`,
      [randomUUID(), assistant.assistant_id, threadId ?? null, body.schedule, body.timezone ?? null, json(pickPayload(body)),
        json(body.metadata), body.enabled ?? true, threadId ? null : (body.on_run_completed ?? 'delete'), body.end_time ?? null, next.toISOString()],
    );
    this.bus?.publish(TOPIC_CRONS, '');
    return rows[0]!;
  }

  async patch(cronId: string, body: CronBody): Promise<CronRow> {
    const current = await this.get(cronId);
    const schedule = body.schedule ?? current.schedule;
    const timezone = body.timezone !== undefined ? body.timezone : current.timezone;
    const payload = { ...current.payload, ...pickPayload(body) };
    const rows = await this.#db.query<CronRow>(
      `UPDATE agent_crons SET schedule = $2, timezone = $3, payload = $4::jsonb, metadata = metadata || $5::jsonb,
         enabled = coalesce($6, enabled), on_run_completed = coalesce($7, on_run_completed),
         end_time = CASE WHEN $8 THEN $9::timestamptz ELSE end_time END, next_run_date = $10, updated_at = now()
       WHERE cron_id = $1 RETURNING ${COLUMNS}`,
      [cronId, schedule, timezone, json(payload), json(body.metadata), body.enabled ?? null, body.on_run_completed ?? null,
        body.end_time !== undefined, body.end_time ?? null, nextRunDate(schedule, timezone).toISOString()],
    );
    this.bus?.publish(TOPIC_CRONS, '');
    return rows[0]!;
  }

  async get(cronId: string): Promise<CronRow> {
    const rows = UUID.test(cronId) ? await this.#db.query<CronRow>(`SELECT ${COLUMNS} FROM agent_crons WHERE cron_id = $1`, [cronId]) : [];
    if (!rows[0]) throw notFound(`Cron with ID ${cronId} not found`);
    return rows[0];
  }

  async delete(cronId: string): Promise<void> {
    const rows = UUID.test(cronId) ? await this.#db.query(`DELETE FROM agent_crons WHERE cron_id = $1 RETURNING 1`, [cronId]) : [];
    if (rows.length === 0) throw notFound(`Cron with ID ${cronId} not found`);
  }

  #where(filter: { assistantId?: string; threadId?: string; enabled?: boolean; metadata?: Record<string, unknown> }): Where {
    const where = new Where();
    if (filter.assistantId) where.add(`assistant_id::text = ${where.param(this.#assistants.resolveId(filter.assistantId))}`);
    if (filter.threadId) where.add(`thread_id = ${where.param(filter.threadId)}`);
    if (filter.enabled !== undefined) where.add(`enabled = ${where.param(filter.enabled)}`);
    if (filter.metadata && Object.keys(filter.metadata).length) where.add(`metadata @> ${where.param(json(filter.metadata))}::jsonb`);
    return where;
  }

  async search(filter: { assistantId?: string; threadId?: string; enabled?: boolean; metadata?: Record<string, unknown> }, page: { limit: number; offset: number; sortBy?: string; sortOrder?: string }): Promise<CronRow[]> {
    const where = this.#where(filter);
    return this.#db.query<CronRow>(
      `SELECT ${COLUMNS} FROM agent_crons ${where} ORDER BY ${orderBy(page.sortBy, page.sortOrder, SORT, 'created_at')}, cron_id
       LIMIT ${where.param(page.limit)} OFFSET ${where.param(page.offset)}`,
      where.params,
    );
  }

  async count(filter: { assistantId?: string; threadId?: string; metadata?: Record<string, unknown> }): Promise<number> {
    const where = this.#where(filter);
    const rows = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM agent_crons ${where}`, where.params);
    return rows[0]!.n;
  }

  /** Claims the due crons, moves each to its next date (or disables it past its end), then queues their runs. */
  async fireDue(logger: Logger): Promise<number> {
    const due = await this.#db.query<CronRow>(
      `SELECT ${COLUMNS} FROM agent_crons WHERE enabled AND next_run_date <= now() ORDER BY next_run_date LIMIT 100`,
    );
    let fired = 0;
    for (const cron of due) {
      const next = nextRunDate(cron.schedule, cron.timezone);
      const ended = cron.end_time !== null && Date.parse(cron.end_time) <= Date.now();
      // Only the process whose update moved next_run_date fires this occurrence.
      const claimed = await this.#db.query(
        `UPDATE agent_crons SET next_run_date = $3, enabled = $4, updated_at = now()
          WHERE cron_id = $1 AND next_run_date = $2 RETURNING 1`,
        [cron.cron_id, cron.next_run_date, next.toISOString(), !(ended || (cron.end_time !== null && next.getTime() > Date.parse(cron.end_time)))],
      );
      if (claimed.length === 0 || ended) continue;
      const body = { ...cron.payload, assistant_id: cron.assistant_id, metadata: { ...cron.metadata, cron_id: cron.cron_id, cron_scheduled_for: cron.next_run_date } } as RunCreate;
      try {
        if (cron.thread_id) await this.#runs.create(cron.thread_id, { multitask_strategy: 'enqueue', ...body });
        else await this.#runs.create(undefined, { ...body, on_completion: (cron.on_run_completed as 'delete' | 'keep' | null) ?? 'delete' });
        fired++;
      } catch (error) {
        logger.warn({ err: error, cron_id: cron.cron_id }, 'cron run could not be created');
      }
    }
    return fired;
  }

  async nextDue(): Promise<number | undefined> {
    const rows = await this.#db.query<{ s: number | null }>(`SELECT extract(epoch FROM min(next_run_date) - now())::float8 AS s FROM agent_crons WHERE enabled`);
    return rows[0]?.s ?? undefined;
  }
}

/** Sleeps until the earliest due cron (at most intervalSeconds), woken early when crons change. */
export class CronScheduler {
  readonly #o: { db: Db; crons: CronService; logger: Logger; intervalSeconds: number; bus: EventBus };
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #running = false;
  #unsubscribe: (() => void) | undefined;

  constructor(options: { db: Db; crons: CronService; logger: Logger; intervalSeconds: number; bus: EventBus }) {
    this.#o = options;
    options.crons.bus = options.bus;
  }

  async start(): Promise<void> {
    this.#unsubscribe = this.#o.bus.subscribe(TOPIC_CRONS, () => this.#schedule(0));
    this.#schedule(0);
  }

  #schedule(seconds: number): void {
    if (this.#stopped) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#tick(), Math.max(0, seconds * 1000));
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    let wait = this.#o.intervalSeconds;
    try {
      await this.#o.crons.fireDue(this.#o.logger);
      const next = await this.#o.crons.nextDue();
      if (next !== undefined) wait = Math.min(wait, Math.max(0.05, next));
    } catch (error) {
      this.#o.logger.warn({ err: error }, 'cron tick failed');
    } finally {
      this.#running = false;
    }
    this.#schedule(wait);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#unsubscribe?.();
  }
}
