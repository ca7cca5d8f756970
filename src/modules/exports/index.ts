// Bulk export of trace runs to S3-compatible storage as Parquet: destinations, exports, export runs, the
// workers that execute them and the scheduler of recurring exports.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { Db } from '../../platform/db/index.ts';
import { DestinationsRepo } from './destinations-repo.ts';
import { DestinationsService } from './destinations-service.ts';
import { ExportsRepo } from './exports-repo.ts';
import { ExportsService } from './exports-service.ts';
import { systemClock, type Clock, type RunSource, type TraceStorePort } from './ports.ts';
import { registerExportRoutes } from './routes.ts';
import type { ExportSettings } from './settings.ts';
import { traceStorePort, type ProjectLookup } from './trace-store.ts';
import { ExportWorker } from './worker/export-worker.ts';
import { ExportScheduler } from './worker/scheduler.ts';
import { WorkerRepo } from './worker/worker-repo.ts';

export { DEFAULT_EXPORT_SETTINGS } from './settings.ts';
export type { ExportSettings } from './settings.ts';
export type { Clock, RunSource, RunScanRequest, ScannedRun, TraceStorePort } from './ports.ts';
export { EXPORT_FIELDS } from './fields.ts';

export interface Exports {
  destinations: DestinationsService;
  exports: ExportsService;
  scheduler: ExportScheduler;
  registerRoutes(app: FastifyInstance): void;
  startWorkers(): Promise<void>;
  stopWorkers(): Promise<void>;
}

export interface ExportsDeps {
  db: Db;
  secrets: SecretBox;
  logger: Logger;
  settings: ExportSettings;
  clock?: Clock;
  /** The trace store's projects (sessions) service. */
  projects: ProjectLookup;
  /** Replaces the trace store port (tests). */
  traces?: TraceStorePort;
  /** Wraps the run source the workers read from (tests inject faults here). */
  wrapRunSource?: (source: RunSource) => RunSource;
}

export function createExports(deps: ExportsDeps): Exports {
  const logger = deps.logger.child({ module: 'exports' });
  const clock = deps.clock ?? systemClock;
  const traces = deps.traces ?? traceStorePort(deps.db, deps.projects);
  const destinationsRepo = new DestinationsRepo(deps.db);
  const destinations = new DestinationsService(destinationsRepo, deps.secrets, logger);
  const repo = new ExportsRepo(deps.db);
  const exports = new ExportsService({ repo, destinations: destinationsRepo, traces, db: deps.db, clock, defaults: { compression: deps.settings.compression } });
  const scheduler = new ExportScheduler(repo, exports);
  let worker: ExportWorker | undefined;
  return {
    destinations,
    exports,
    scheduler,
    registerRoutes: (app) => registerExportRoutes(app, destinations, exports),
    async startWorkers() {
      worker = new ExportWorker({
        db: deps.db, repo: new WorkerRepo(deps.db), destinations: destinationsRepo, destinationClients: destinations,
        source: deps.wrapRunSource ? deps.wrapRunSource(traces.runs) : traces.runs, scheduler, clock, settings: deps.settings, logger,
      });
      await worker.start();
    },
    async stopWorkers() {
      await worker?.stop();
    },
  };
}
