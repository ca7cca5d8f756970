// Crons: runs on a schedule, for a thread or stateless. This file keeps them; cron-fires.ts fires them.
import { randomUUID } from 'node:crypto';
import { CronExpressionParser } from 'cron-parser';
import type { Db } from '../../platform/db/index.ts';
import type { EventBus } from '../../platform/events/event-bus.ts';
import { InputValidationError, notFound } from '../../platform/errors.ts';
import type { AssistantService } from './assistants.ts';
import type { RunCreate } from './runs.ts';
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

export const CRON_COLUMNS = 'cron_id, assistant_id, thread_id, on_run_completed, end_time, schedule, timezone, created_at, updated_at, payload, user_id, next_run_date, metadata, enabled';
const SORT = ['cron_id', 'assistant_id', 'thread_id', 'created_at', 'updated_at', 'next_run_date'] as const;
/** Published when crons change: wakes the scheduler. */
export const TOPIC_CRONS = 'agents:crons';
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
  readonly #assistants: AssistantService;
  bus: EventBus | undefined;

  constructor(db: Db, assistants: AssistantService) {
    this.#db = db;
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
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9, $10, $11) RETURNING ${CRON_COLUMNS}`,
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
    // A fire still owed by a cron this patch disables, or scheduled after its new end_time, is not delivered.
    const rows = await this.#db.query<CronRow>(
      `WITH patched AS (
         UPDATE agent_crons SET schedule = $2, timezone = $3, payload = $4::jsonb, metadata = metadata || $5::jsonb,
           enabled = coalesce($6, enabled), on_run_completed = coalesce($7, on_run_completed),
           end_time = CASE WHEN $8 THEN $9::timestamptz ELSE end_time END, next_run_date = $10, updated_at = now()
         WHERE cron_id = $1 RETURNING ${CRON_COLUMNS}),
       dropped AS (
         DELETE FROM agent_cron_fires f USING patched
          WHERE f.cron_id = patched.cron_id AND ($6::boolean IS FALSE OR f.scheduled_for > patched.end_time))
       SELECT * FROM patched`,
      [cronId, schedule, timezone, json(payload), json(body.metadata), body.enabled ?? null, body.on_run_completed ?? null,
        body.end_time !== undefined, body.end_time ?? null, nextRunDate(schedule, timezone).toISOString()],
    );
    this.bus?.publish(TOPIC_CRONS, '');
    return rows[0]!;
  }

  async get(cronId: string): Promise<CronRow> {
    const rows = UUID.test(cronId) ? await this.#db.query<CronRow>(`SELECT ${CRON_COLUMNS} FROM agent_crons WHERE cron_id = $1`, [cronId]) : [];
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
      `SELECT ${CRON_COLUMNS} FROM agent_crons ${where} ORDER BY ${orderBy(page.sortBy, page.sortOrder, SORT, 'created_at')}, cron_id
       LIMIT ${where.param(page.limit)} OFFSET ${where.param(page.offset)}`,
      where.params,
    );
  }

  async count(filter: { assistantId?: string; threadId?: string; metadata?: Record<string, unknown> }): Promise<number> {
    const where = this.#where(filter);
    const rows = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM agent_crons ${where}`, where.params);
    return rows[0]!.n;
  }
}
