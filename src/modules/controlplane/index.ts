// The control plane module: deployments, revisions, listeners, the build pipeline and the data plane seam.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { Db } from '../../platform/db/index.ts';
import type { JobQueue } from '../../platform/queue/job-queue.ts';
import { DataPlaneReportService } from './dataplane.ts';
import { ListenerRepo } from './listeners/repo.ts';
import { registerListenerRoutes } from './listeners/routes.ts';
import { ListenerService } from './listeners/service.ts';
import { RevisionPipeline, type PipelineOptions } from './pipeline/revision-pipeline.ts';
import { ControlPlaneRepo } from './repo.ts';
import { RevisionVersions } from './revision-versions.ts';
import { registerControlPlaneRoutes } from './routes.ts';
import { ControlPlaneService, type TracingProjects } from './service.ts';

export type { DataPlaneDriver, DataPlaneReports, DeployReport } from './dataplane.ts';
export type { PipelineOptions } from './pipeline/revision-pipeline.ts';
export type { TracingProjects } from './service.ts';

export interface ControlPlane {
  service: ControlPlaneService;
  dataPlane: DataPlaneReportService;
  registerRoutes(app: FastifyInstance): void;
  startWorkers(): Promise<void>;
  /** Stops running builds; their jobs are picked up again by the next worker. */
  stopWorkers(): void;
}

export async function createControlPlane(deps: { db: Db; queue: JobQueue; secrets: SecretBox; logger: Logger; pipeline: PipelineOptions; projects: TracingProjects }): Promise<ControlPlane> {
  const repo = new ControlPlaneRepo(deps.db);
  const pipeline = new RevisionPipeline(repo, deps.queue, deps.pipeline, deps.logger.child({ module: 'controlplane' }));
  await pipeline.declareQueues();
  const versions = new RevisionVersions(repo, deps.db.engine === 'pglite');
  await versions.start();
  const service = new ControlPlaneService(repo, deps.secrets, pipeline, deps.projects, versions);
  const dataPlane = new DataPlaneReportService(repo);
  const listeners = new ListenerService(new ListenerRepo(deps.db));
  return {
    service,
    dataPlane,
    registerRoutes: (app) => {
      registerControlPlaneRoutes(app, service, dataPlane);
      registerListenerRoutes(app, listeners);
    },
    startWorkers: () => pipeline.startWorkers(),
    stopWorkers: () => pipeline.abortBuilds(),
  };
}
