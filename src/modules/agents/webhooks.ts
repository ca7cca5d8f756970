// Webhooks: a POST of the finished run to the URL the run named. Deliveries are rows written with the run's
// end (see RunRepo.finish), so none is lost with a process: this outbox claims due rows (pushing them past
// a claim period, so a dead process's claim lapses), POSTs them, deletes them once accepted, and schedules
// a retry with back-off otherwise. It wakes when this process ends a run with a webhook, at the time the
// next retry is due, and every claim period to pick up what other processes left.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { prepared, type SqlExecutor } from '../../platform/db/index.ts';
import { CoalescedDrain } from '../../platform/coalesced-drain.ts';

export interface WebhookDelivery {
  url: string;
  /** The JSON body (an object), without `webhook_sent_at`. */
  payload: string;
}

interface DeliveryRow {
  delivery_id: string;
  run_id: string;
  url: string;
  payload: string;
  attempt: number;
}

export interface WebhookOutboxOptions {
  db: SqlExecutor;
  logger: Logger;
  /** Attempts before a delivery is given up (logged). */
  attempts?: number;
  baseDelayMs?: number;
  timeoutMs?: number;
  /** How long a claimed delivery stays with its process; also the period of the sweep for lapsed claims. */
  claimSeconds?: number;
}

/** A JSON object's text with one more field, whose value is JSON text already (a large one is not parsed). */
function withField(objectJson: string, key: string, valueJson: string): string {
  return `${objectJson.slice(0, -1)},${JSON.stringify(key)}:${valueJson}}`;
}

/** The body of a finished run's webhook: the run, its end and its final values (already JSON). */
export function webhookPayload(run: Record<string, unknown>, valuesJson: string): string {
  return withField(JSON.stringify(run), 'values', valuesJson);
}

export class WebhookOutbox {
  readonly #o: Required<Omit<WebhookOutboxOptions, 'db' | 'logger'>> & Pick<WebhookOutboxOptions, 'db' | 'logger'>;
  readonly #inflight = new Set<Promise<void>>();
  readonly #drain = new CoalescedDrain(() => this.#deliverDue(), (error) => this.#o.logger.warn({ err: error }, 'webhook outbox failed'));
  #stopped = true;
  #retry: NodeJS.Timeout | undefined;
  #sweep: NodeJS.Timeout | undefined;

  constructor(options: WebhookOutboxOptions) {
    this.#o = { attempts: 3, baseDelayMs: 500, timeoutMs: 10_000, claimSeconds: 30, ...options };
  }

  start(): void {
    this.#stopped = false;
    this.#sweep = setInterval(() => this.wake(), this.#o.claimSeconds * 1000);
    this.#sweep.unref();
    this.wake();
  }

  /** Records a delivery outside a run's end statement (a rolled-back run has none); the caller wakes the outbox. */
  async record(runId: string, delivery: WebhookDelivery): Promise<void> {
    await this.#o.db.query(
      `INSERT INTO agent_webhook_deliveries (delivery_id, run_id, url, payload) VALUES ($1, $2, $3, $4)`,
      [randomUUID(), runId, delivery.url, delivery.payload],
    );
  }

  /** Delivers what is due now (after this process ended a run with a webhook, say). */
  wake(): void {
    if (!this.#stopped) this.#drain.wake();
  }

  async #deliverDue(): Promise<void> {
    let due: DeliveryRow[];
    do {
      due = this.#stopped ? [] : await this.#claim();
      for (const row of due) {
        const job = this.#deliver(row).finally(() => this.#inflight.delete(job));
        this.#inflight.add(job);
      }
    } while (due.length > 0);
    if (!this.#stopped) await this.#scheduleNext();
  }

  async #claim(): Promise<DeliveryRow[]> {
    return this.#o.db.query<DeliveryRow>(
      prepared(`UPDATE agent_webhook_deliveries d SET attempt = d.attempt + 1,
         next_attempt_at = now() + $1::float8 * interval '1 second'
       FROM (SELECT delivery_id FROM agent_webhook_deliveries WHERE next_attempt_at <= now()
              ORDER BY next_attempt_at LIMIT 20 FOR UPDATE SKIP LOCKED) due
       WHERE d.delivery_id = due.delivery_id
       RETURNING d.delivery_id, d.run_id, d.url, d.payload, d.attempt`),
      [this.#o.claimSeconds],
    );
  }

  /** Arms a timer for the earliest retry (claims of other processes are found by the sweep). */
  async #scheduleNext(): Promise<void> {
    const rows = await this.#o.db.query<{ s: number | null }>(
      `SELECT extract(epoch FROM min(next_attempt_at) - now())::float8 AS s FROM agent_webhook_deliveries`,
    );
    const seconds = rows[0]?.s;
    if (this.#retry) clearTimeout(this.#retry);
    this.#retry = undefined;
    if (seconds === null || seconds === undefined || this.#stopped) return;
    this.#retry = setTimeout(() => this.wake(), Math.max(0, seconds * 1000) + 5);
    this.#retry.unref();
  }

  async #deliver(row: DeliveryRow): Promise<void> {
    const { logger } = this.#o;
    // The stored body is an object: the send time goes in as its last field.
    const body = withField(row.payload, 'webhook_sent_at', JSON.stringify(new Date().toISOString()));
    let failure: string;
    try {
      const response = await fetch(row.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(this.#o.timeoutMs),
      });
      await response.body?.cancel();
      if (response.ok) return this.#delete(row);
      failure = `HTTP ${response.status}`;
    } catch (error) {
      failure = (error as Error).message;
    }
    if (row.attempt >= this.#o.attempts) {
      logger.warn({ url: row.url, run_id: row.run_id, attempts: row.attempt, error: failure }, 'webhook given up');
      return this.#delete(row);
    }
    logger.warn({ url: row.url, run_id: row.run_id, attempt: row.attempt, error: failure }, 'webhook failed; retrying');
    const delaySeconds = (this.#o.baseDelayMs * 2 ** (row.attempt - 1)) / 1000;
    await this.#o.db.query(
      `UPDATE agent_webhook_deliveries SET next_attempt_at = now() + $2::float8 * interval '1 second', last_error = $3 WHERE delivery_id = $1`,
      [row.delivery_id, delaySeconds, failure],
    );
    this.wake();
  }

  async #delete(row: DeliveryRow): Promise<void> {
    await this.#o.db.query(prepared(`DELETE FROM agent_webhook_deliveries WHERE delivery_id = $1`), [row.delivery_id]);
  }

  /** Stops claiming; deliveries in flight finish (unfinished ones stay for the next process). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#retry) clearTimeout(this.#retry);
    if (this.#sweep) clearInterval(this.#sweep);
    await Promise.allSettled([...this.#inflight]);
  }
}
