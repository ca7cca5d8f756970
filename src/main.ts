// Composition root: configuration → platform → modules → HTTP and/or workers.
// The only place that picks implementations (storage engine, job queue backend).
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { createLogger } from './platform/logging.ts';
import { storageOptions, type Db } from './platform/db/index.ts';
import { openStorage } from './platform/db/storage.ts';
import { TenantStore, bootstrapTenancy, installAuthentication, type BootstrapResult } from './platform/auth/index.ts';
import { registerTenancyRoutes } from './platform/auth/routes.ts';
import { loadSecretBox } from './platform/crypto/secret-box.ts';
import { createHttpServer } from './platform/http/server.ts';
import { JobQueue } from './platform/queue/job-queue.ts';
import { createControlPlane, type ControlPlane } from './modules/controlplane/index.ts';
import { createTracing, type Tracing } from './modules/tracing/index.ts';
import { createExports, type Clock, type Exports, type RunSource } from './modules/exports/index.ts';

export const VERSION = '0.1.0';

export interface Berth {
  config: Config;
  db: Db;
  logger: Logger;
  bootstrap: BootstrapResult;
  controlPlane: ControlPlane;
  tracing: Tracing;
  exports: Exports;
  /** Present when this process serves HTTP. */
  app: FastifyInstance | undefined;
  /** Base URL the HTTP server listens on. */
  url: string | undefined;
  close(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  /** Embedded storage location override (tests use `memory://`). */
  pgliteDir?: string;
  /** Time as bulk export sees it (scheduled-export tests move it forward). */
  exportClock?: Clock;
  /** Wraps the run source export workers read from (fault-injection tests). */
  wrapExportRunSource?: (source: RunSource) => RunSource;
}

export async function startBerth(config: Config, options: StartOptions = {}): Promise<Berth> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const { db, shutdown } = await openStorage(storageOptions(config, options.pgliteDir), logger);
  const close = () => shutdown.closeAll();
  try {
    const tenants = new TenantStore(db);
    const bootstrap = await bootstrapTenancy(tenants, { dataDir: config.dataDir, apiKey: config.bootstrapApiKey });
    const secrets = await loadSecretBox(config.secretKey, config.dataDir);
    const queue = new JobQueue(db, { superviseIntervalSeconds: config.controlPlane.superviseIntervalSeconds, logger });
    await queue.start();
    shutdown.add(() => queue.stop());
    const tracing = createTracing({ db, options: { maxBodyBytes: config.tracing.maxBodyBytes, version: VERSION } });
    const controlPlane = await createControlPlane({
      db, queue, secrets, logger,
      // Each deployment traces into a project of its own name, as on the hosted platform.
      projects: {
        ensure: async (tenantId, name) => void (await tracing.sessions.create(tenantId, { name }, true)),
        deleteByName: async (tenantId, name) => {
          const [project] = await tracing.sessions.list(tenantId, { name }, 1, 0);
          if (project) await tracing.sessions.delete(tenantId, project.id);
        },
      },
      pipeline: {
        dataDir: config.dataDir,
        buildConcurrency: config.controlPlane.buildConcurrency,
        buildTimeoutSeconds: config.controlPlane.buildTimeoutSeconds,
        heartbeatSeconds: config.controlPlane.jobHeartbeatSeconds,
      },
    });
    const exports = createExports({
      db, secrets, logger, settings: config.exports, projects: tracing.sessions,
      clock: options.exportClock, wrapRunSource: options.wrapExportRunSource,
    });

    let app: FastifyInstance | undefined;
    let url: string | undefined;
    if (config.role !== 'worker') {
      app = await createHttpServer({
        logger,
        openapi: { title: 'Berth', version: VERSION, description: 'Self-hosted agent platform: deployment control plane, trace store and bulk export, agent servers.' },
      });
      const auth = installAuthentication(app, tenants);
      registerTenancyRoutes(app, tenants, auth);
      controlPlane.registerRoutes(app);
      tracing.registerRoutes(app);
      exports.registerRoutes(app);
      url = await app.listen({ host: config.host, port: config.port });
      const server = app;
      shutdown.add(() => server.close());
    }
    if (config.role !== 'api') {
      await controlPlane.startWorkers();
      // Runs before the queue stops: builds in flight are aborted and left for the next worker.
      shutdown.add(async () => controlPlane.stopWorkers());
      await exports.startWorkers();
      // Runs in flight are given back (no attempt counted) before the database closes.
      shutdown.add(() => exports.stopWorkers());
    }
    return { config, db, logger, bootstrap, controlPlane, tracing, exports, app, url, close };
  } catch (error) {
    await close();
    throw error;
  }
}
