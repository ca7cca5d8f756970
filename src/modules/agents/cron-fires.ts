// Cron fires, exactly once per scheduled time, across crashes and processes. Claiming an occurrence moves
// the cron to its next date and records the fire it owes, in one statement. The fire's run has an id
// derived from (cron, scheduled time), and inserting that run consumes the owed fire in the same
// transaction (the trigger of migration 0006), so a fire is delivered once however many processes try.
// A process that dies between claim and run leaves the fire owed: any process's recovery pass delivers it.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../../platform/db/index.ts';
import type { EventBus } from '../../platform/events/event-bus.ts';
import { AppError } from '../../platform/errors.ts';
import { canonicalUuid } from '../../platform/http/validation/uuid-error.ts';
import { CRON_COLUMNS, nextRunDate, TOPIC_CRONS, type CronRow, type CronService } from './crons.ts';
import type { RunCreate, RunService } from './runs.ts';

/** A fire a cron owes: until its run is inserted, or the run is refused for good. */
export interface OwedFire {
  run_id: string;
  cron_id: string;
  scheduled_for: string;
}

/**
 * What a delivery did: created the run; found the fire no longer owed (delivered elsewhere, or its cron
 * deleted or disabled); had the run refused for good (the fire is dropped); or failed (the fire stays
 * owed and recovery retries it).
 */
export type FireOutcome = 'created' | 'not_owed' | 'refused' | 'failed';

/** SQLSTATE raised by the insert of a cron fire's run that is not owed (migration 0006). */
const FIRE_NOT_OWED = 'BC001';
/** A fire still owed this long after its last attempt is taken as abandoned by a process that died. */
const RECOVER_AFTER_SECONDS = 10;
const FIRE_NAMESPACE = '7c3f4e2a-5b1d-4f6e-9a8c-0d2e4b6f8a1c';
const CLAIM_BATCH = 100;
const FIRE_CRON_COLUMNS = CRON_COLUMNS.split(', ').map((column) => `c.${column}`).join(', ');

/** RFC 9562 UUID version 5: SHA-1 of the namespace's bytes and the name. */
export function uuidV5(namespace: string, name: string): string {
  const hash = createHash('sha1').update(Buffer.from(namespace.replaceAll('-', ''), 'hex')).update(name).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  return canonicalUuid(hash.subarray(0, 16).toString('hex'));
}

/** The run id of a cron's fire at a scheduled time: the same in every process, and the only kind of version-5 run id. */
export function cronFireRunId(cronId: string, scheduledFor: string): string {
  return uuidV5(FIRE_NAMESPACE, `${cronId}@${new Date(scheduledFor).toISOString()}`);
}

export class CronFires {
  readonly #db: Db;
  readonly #runs: RunService;
  readonly #logger: Logger;

  constructor(db: Db, runs: RunService, logger: Logger) {
    this.#db = db;
    this.#runs = runs;
    this.#logger = logger;
  }

  /** Claims the due crons and delivers the fires they owe; returns the runs created. */
  async fireDue(): Promise<number> {
    const due = await this.#db.query<CronRow>(
      `SELECT ${CRON_COLUMNS} FROM agent_crons WHERE enabled AND next_run_date <= now() ORDER BY next_run_date LIMIT ${CLAIM_BATCH}`,
    );
    let created = 0;
    for (const cron of due) {
      const fire = await this.claim(cron);
      if (fire && (await this.deliver(cron, fire)) === 'created') created++;
    }
    return created;
  }

  /**
   * Claims the cron's occurrence at its next_run_date: moves the cron past it (disabled when the next one
   * falls after end_time) and records the fire it owes, in one statement. Undefined when another process
   * claimed it first, or when end_time had passed (then nothing is owed).
   */
  async claim(cron: CronRow): Promise<OwedFire | undefined> {
    const now = Date.now();
    // From the occurrence itself when it is still ahead, so that the cron always moves past it.
    const next = nextRunDate(cron.schedule, cron.timezone, new Date(Math.max(now, Date.parse(cron.next_run_date!))));
    const end = cron.end_time === null ? Infinity : Date.parse(cron.end_time);
    // Only the process whose update moved next_run_date records the fire.
    const rows = await this.#db.query<OwedFire>(
      `WITH claimed AS (
         UPDATE agent_crons SET next_run_date = $3, enabled = $4, updated_at = now()
          WHERE cron_id = $1 AND next_run_date = $2 RETURNING cron_id)
       INSERT INTO agent_cron_fires (run_id, cron_id, scheduled_for)
       SELECT $5::uuid, cron_id, $2::timestamptz FROM claimed WHERE $6::boolean
       RETURNING run_id, cron_id, scheduled_for`,
      [cron.cron_id, cron.next_run_date, next.toISOString(), end > now && next.getTime() <= end,
        cronFireRunId(cron.cron_id, cron.next_run_date!), end > now],
    );
    return rows[0];
  }

  /** Creates the fire's run (its insert consumes the owed fire), or finds the fire no longer owed. */
  async deliver(cron: CronRow, fire: OwedFire): Promise<FireOutcome> {
    const body = { ...cron.payload, assistant_id: cron.assistant_id, metadata: { ...cron.metadata, cron_id: cron.cron_id, cron_scheduled_for: fire.scheduled_for } } as RunCreate;
    try {
      if (cron.thread_id) await this.#runs.create(cron.thread_id, { multitask_strategy: 'enqueue', ...body }, { runId: fire.run_id });
      else await this.#runs.create(undefined, { ...body, on_completion: (cron.on_run_completed as 'delete' | 'keep' | null) ?? 'delete' }, { runId: fire.run_id });
      return 'created';
    } catch (error) {
      const log = this.#logger.child({ cron_id: cron.cron_id, run_id: fire.run_id, scheduled_for: fire.scheduled_for });
      if ((error as { code?: string }).code === FIRE_NOT_OWED) {
        log.debug('cron fire no longer owed: delivered by another process, or its cron deleted or disabled');
        return 'not_owed';
      }
      if (error instanceof AppError) {
        // Refused for good (thread gone, busy thread under multitask_strategy "reject", assistant deleted):
        // as a rejected run on the official server, the fire is done rather than retried forever.
        await this.#db.query(`DELETE FROM agent_cron_fires WHERE run_id = $1`, [fire.run_id]);
        log.warn({ err: error }, 'cron run refused');
        return 'refused';
      }
      log.warn({ err: error }, 'cron run could not be created: the fire stays owed and is retried');
      return 'failed';
    }
  }

  /**
   * Delivers the fires owed for olderThanSeconds since their last attempt (their process died, or the
   * attempt failed). Each is taken with SKIP LOCKED and its attempt time moved on, so that concurrent
   * passes share the work; were one taken twice anyway, only one run would be inserted.
   */
  async recover(olderThanSeconds = RECOVER_AFTER_SECONDS): Promise<number> {
    const owed = await this.#db.query<CronRow & OwedFire>(
      `UPDATE agent_cron_fires f SET attempted_at = now()
         FROM agent_crons c
        WHERE c.cron_id = f.cron_id AND f.run_id IN (
          SELECT run_id FROM agent_cron_fires WHERE attempted_at <= now() - $1::float8 * interval '1 second'
           ORDER BY attempted_at LIMIT ${CLAIM_BATCH} FOR UPDATE SKIP LOCKED)
       RETURNING f.run_id, f.scheduled_for, ${FIRE_CRON_COLUMNS}`,
      [olderThanSeconds],
    );
    let created = 0;
    for (const row of owed) if ((await this.deliver(row, row)) === 'created') created++;
    return created;
  }

  /** Seconds until the next due cron or the next owed fire to recover, if any. */
  async nextDue(): Promise<number | undefined> {
    const rows = await this.#db.query<{ s: number | null }>(
      `SELECT extract(epoch FROM least(
         (SELECT min(next_run_date) FROM agent_crons WHERE enabled),
         (SELECT min(attempted_at) FROM agent_cron_fires) + $1::float8 * interval '1 second') - now())::float8 AS s`,
      [RECOVER_AFTER_SECONDS],
    );
    return rows[0]?.s ?? undefined;
  }
}

/** Sleeps until the earliest due cron or owed fire (at most intervalSeconds), woken early when crons change. */
export class CronScheduler {
  readonly #o: { fires: CronFires; logger: Logger; intervalSeconds: number; bus: EventBus };
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #running = false;
  #unsubscribe: (() => void) | undefined;

  constructor(options: { crons: CronService; fires: CronFires; logger: Logger; intervalSeconds: number; bus: EventBus }) {
    this.#o = options;
    options.crons.bus = options.bus;
  }

  /** The first pass at once: it also recovers the fires abandoned by processes that died (nextDue counts the younger ones). */
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
      await this.#o.fires.recover();
      await this.#o.fires.fireDue();
      const next = await this.#o.fires.nextDue();
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
