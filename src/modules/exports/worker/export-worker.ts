// The export workers of one process: `workerConcurrency` slots that claim runs, execute them with a lease
// kept alive by heartbeats, and record the outcome; plus a supervisor that times out exports and spawns
// scheduled windows. Any number of processes can run this against one database.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../../../platform/db/index.ts';
import { classifyS3Error, isDestinationError } from '../../../platform/objectstore/index.ts';
import type { DestinationsRepo } from '../destinations-repo.ts';
import type { DestinationsService } from '../destinations-service.ts';
import { CANCEL_CHANNEL, WORK_CHANNEL } from '../exports-service.ts';
import { EXPORT_FIELDS, type ExportField } from '../fields.ts';
import type { Clock, RunSource } from '../ports.ts';
import type { ExportSettings } from '../settings.ts';
import { executeRun } from './run-executor.ts';
import type { ExportScheduler } from './scheduler.ts';
import type { ClaimedRun, WorkerRepo } from './worker-repo.ts';

/** Why a run was stopped from outside; none of these is a failure of the run itself. */
class RunStopped extends Error {
  readonly why: 'cancelled' | 'lease_lost' | 'shutdown';
  constructor(why: 'cancelled' | 'lease_lost' | 'shutdown') {
    super(`run stopped: ${why}`);
    this.why = why;
  }
}

class RunTimedOut extends Error {}

interface ActiveRun {
  exportId: string;
  controller: AbortController;
}

export interface ExportWorkerDeps {
  db: Db;
  repo: WorkerRepo;
  destinations: DestinationsRepo;
  destinationClients: DestinationsService;
  source: RunSource;
  scheduler: ExportScheduler;
  clock: Clock;
  settings: ExportSettings;
  logger: Logger;
}

export class ExportWorker {
  readonly #deps: ExportWorkerDeps;
  readonly #owner = `${process.pid}:${randomUUID()}`;
  readonly #active = new Map<string, ActiveRun>();
  readonly #loops: Promise<void>[] = [];
  #stopping = false;
  #wake: (() => void)[] = [];
  #unlisten: (() => Promise<void>)[] = [];

  constructor(deps: ExportWorkerDeps) {
    this.#deps = deps;
  }

  async start(): Promise<void> {
    const { db, settings } = this.#deps;
    this.#unlisten.push(await db.listen(WORK_CHANNEL, () => this.#wakeAll()));
    this.#unlisten.push(await db.listen(CANCEL_CHANNEL, (exportId) => this.#stopExport(exportId)));
    for (let slot = 0; slot < settings.workerConcurrency; slot++) this.#loops.push(this.#slot());
    this.#loops.push(this.#supervise());
  }

  /** Stops claiming, aborts runs in flight and gives them back for another worker (no attempt counted). */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    for (const active of this.#active.values()) active.controller.abort(new RunStopped('shutdown'));
    this.#wakeAll();
    await Promise.allSettled(this.#loops);
    for (const unlisten of this.#unlisten) await unlisten().catch(() => undefined);
  }

  #wakeAll(): void {
    const waiting = this.#wake;
    this.#wake = [];
    for (const resolve of waiting) resolve();
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.#wake = self.#wake.filter((item) => item !== done);
        resolve();
      }
      this.#wake.push(done);
    });
  }

  #stopExport(exportId: string): void {
    for (const active of this.#active.values()) {
      if (active.exportId === exportId) active.controller.abort(new RunStopped('cancelled'));
    }
  }

  async #slot(): Promise<void> {
    const { repo, settings, clock, logger } = this.#deps;
    while (!this.#stopping) {
      let claimed: ClaimedRun | undefined;
      try {
        claimed = await repo.claim(this.#owner, clock.now(), settings);
      } catch (error) {
        if (!this.#stopping) logger.error({ err: error }, 'claiming an export run failed');
      }
      if (!claimed) {
        await this.#sleep(settings.pollIntervalMs);
        continue;
      }
      await this.#runClaimed(claimed);
    }
  }

  async #supervise(): Promise<void> {
    const { repo, scheduler, settings, clock, logger, db } = this.#deps;
    while (!this.#stopping) {
      try {
        const timedOut = await repo.timeOutExports(clock.now(), settings.workflowTimeoutSeconds);
        for (const id of timedOut) {
          logger.warn({ bulkExportId: id }, 'bulk export exceeded the workflow timeout');
          await db.notify(CANCEL_CHANNEL, id).catch(() => undefined);
        }
        const spawned = await scheduler.tick(clock.now());
        if (spawned.length > 0) {
          logger.info({ spawned }, 'scheduled bulk export windows spawned');
          this.#wakeAll();
        }
      } catch (error) {
        if (!this.#stopping) logger.error({ err: error }, 'bulk export supervisor tick failed');
      }
      await this.#sleep(settings.pollIntervalMs);
    }
  }

  async #runClaimed({ run, export: exp }: ClaimedRun): Promise<void> {
    const { repo, settings, clock, destinations, destinationClients, source } = this.#deps;
    const logger = this.#deps.logger.child({ bulkExportId: exp.id, exportRunId: run.id, attempt: run.retry_number });
    if (run.retry_number > settings.retryLimit) {
      await repo.fail(run.id, exp.id, this.#owner, 'Retries exhausted.', { retryable: false, retryLimit: settings.retryLimit, retryDelaySeconds: settings.retryDelaySeconds, now: clock.now() });
      return;
    }
    const controller = new AbortController();
    this.#active.set(run.id, { exportId: exp.id, controller });
    const timeout = setTimeout(() => controller.abort(new RunTimedOut(`The run exceeded its time limit of ${settings.runTimeoutSeconds} s.`)), settings.runTimeoutSeconds * 1000);
    const heartbeat = setInterval(() => {
      repo.heartbeat(run.id, this.#owner, clock.now(), settings.leaseSeconds).then((held) => {
        if (!held) controller.abort(new RunStopped('lease_lost'));
      }, (error) => logger.warn({ err: error }, 'export run heartbeat failed'));
    }, settings.heartbeatSeconds * 1000);
    const client = await (async () => {
      const destination = await destinations.get(exp.tenant_id, exp.bulk_export_destination_id);
      return destination ? { destination, s3: destinationClients.clientFor(destination) } : undefined;
    })().catch(() => undefined);
    try {
      if (!client) throw new Error('The export destination no longer exists.');
      const fields = (exp.export_fields ?? EXPORT_FIELDS) as readonly ExportField[];
      const outcome = await executeRun({
        runId: run.id, tenantId: exp.tenant_id, sessionId: exp.session_id, startTime: run.start_time, endTime: run.end_time,
        filter: exp.filter, fields, formatVersion: exp.format_version, compression: exp.compression,
        bucket: client.destination.config.bucket_name, prefix: run.prefix, cursor: run.latest_cursor,
        filesWritten: run.exported_files.length, pendingUpload: run.pending_upload,
      }, {
        client: client.s3, source, tuning: settings, signal: controller.signal, logger,
        progress: {
          uploadStarted: async (upload) => {
            if (!(await repo.recordUpload(run.id, this.#owner, upload))) throw new RunStopped('lease_lost');
          },
          fileCommitted: async (checkpoint) => {
            if (!(await repo.checkpoint(run.id, this.#owner, checkpoint))) throw new RunStopped('lease_lost');
            logger.debug({ key: checkpoint.key, rows: checkpoint.rows }, 'export file committed');
          },
        },
      });
      const { exportCompleted } = await repo.complete(run.id, exp.id, this.#owner);
      logger.info({ ...outcome, exportCompleted }, 'export run completed');
    } catch (caught) {
      const error = controller.signal.aborted ? controller.signal.reason : caught;
      await this.#recordFailure(run.id, exp.id, error, logger);
    } finally {
      clearTimeout(timeout);
      clearInterval(heartbeat);
      this.#active.delete(run.id);
      client?.s3.destroy();
    }
  }

  async #recordFailure(runId: string, exportId: string, error: unknown, logger: Logger): Promise<void> {
    const { repo, settings, clock } = this.#deps;
    if (error instanceof RunStopped) {
      logger.info({ why: error.why }, 'export run stopped');
      if (error.why === 'shutdown') await repo.release(runId, this.#owner).catch(() => undefined);
      return;
    }
    // Storage and destination errors (credentials, missing bucket, permissions) only a new destination can fix.
    const destinationError = isDestinationError(error);
    const message = destinationError ? `Destination error: ${classifyS3Error(error).message}` : describeError(error);
    const outcome = await repo.fail(runId, exportId, this.#owner, message, {
      retryable: !destinationError, retryLimit: settings.retryLimit, retryDelaySeconds: settings.retryDelaySeconds, now: clock.now(),
    }).catch((failure) => {
      logger.error({ err: failure }, 'recording an export run failure failed; the lease will expire and the run resume');
      return 'gone' as const;
    });
    logger.warn({ err: error, outcome }, 'export run attempt failed');
    if (outcome === 'failed') await this.#deps.db.notify(CANCEL_CHANNEL, exportId).catch(() => undefined);
  }
}

function describeError(error: unknown): string {
  if (error instanceof RunTimedOut) return error.message;
  const s3 = classifyS3Error(error);
  if (s3.kind === 'transient') return `Storage temporarily unavailable: ${s3.message}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
