// Durable background jobs on the same database (pg-boss): retries, fixed delays, timeouts, heartbeats.
// A job whose worker dies stops heartbeating and is retried by whichever process is alive.
import { CompiledQuery, type Transaction } from 'kysely';
import { PgBoss, fromPglite, type Job, type Queue, type SendOptions } from 'pg-boss';
import type { Logger } from 'pino';
import type { Db } from '../db/index.ts';

export type QueueOptions = Omit<Queue, 'name'>;

const NO_SUCH_JOB = '00000000-0000-0000-0000-000000000000';
export type { Job };

export interface JobQueueOptions {
  superviseIntervalSeconds: number;
  logger: Logger;
}

export class JobQueue {
  readonly #boss: PgBoss;
  readonly #logger: Logger;
  #started = false;

  constructor(db: Db, options: JobQueueOptions) {
    const common = {
      superviseIntervalSeconds: options.superviseIntervalSeconds,
      monitorIntervalSeconds: options.superviseIntervalSeconds,
      useListenNotify: true,
      persistWarnings: false,
    };
    this.#boss = db.native.engine === 'pglite'
      ? new PgBoss({ ...common, db: fromPglite(db.native.pglite), backend: 'pglite' })
      : new PgBoss({ ...common, connectionString: db.native.url, schema: db.native.schema === 'public' ? 'pgboss' : `${db.native.schema}_jobs`, max: 4 });
    this.#logger = options.logger;
    this.#boss.on('error', (error) => this.#logger.error({ err: error }, 'job queue error'));
  }

  async start(): Promise<void> {
    if (this.#started) return;
    await this.#boss.start();
    this.#started = true;
  }

  async createQueue(name: string, options: QueueOptions): Promise<void> {
    const existing = await this.#boss.getQueue(name);
    if (existing) await this.#boss.updateQueue(name, options);
    else await this.#boss.createQueue(name, options);
    // pg-boss looks a queue up (on its own connection) the first time a job is sent to it. Inside a
    // transaction on PGlite's single connection that look-up would wait for the transaction forever,
    // so warm the lookup now: completing a job id that does not exist touches the queue and nothing else.
    await this.#boss.complete(name, NO_SUCH_JOB);
  }

  /**
   * Enqueues a job. With `trx`, the job commits or rolls back with the caller's transaction, so a
   * record and the work it needs can never be separated by a crash.
   */
  async send(name: string, data: object, options: SendOptions = {}, trx?: Transaction<any>): Promise<string | null> {
    const db = trx && {
      async executeSql(text: string, values?: unknown[]) {
        const result = await trx.executeQuery(CompiledQuery.raw(text, values ?? []));
        return { rows: result.rows as any[] };
      },
    };
    return this.#boss.send(name, data, db ? { ...options, db } : options);
  }

  async work<T extends object>(name: string, options: { localConcurrency?: number; heartbeatRefreshSeconds?: number }, handler: (job: Job<T>) => Promise<void>): Promise<void> {
    await this.#boss.work<T>(name, { batchSize: 1, ...options }, async ([job]) => {
      if (job) await handler(job);
    });
  }

  async stop(): Promise<void> {
    if (!this.#started) return;
    this.#started = false;
    await this.#boss.stop({ graceful: true, timeout: 10_000, close: true });
  }
}
