// The revision pipeline as durable jobs. Every step is a guarded state transition, so a step repeated
// after a crash, or racing a newer revision or an interrupt, can never move a revision backwards.
//
//   CREATING → QUEUED → (external_container) AWAITING_DEPLOY
//                     → (git_hosting) AWAITING_BUILD → BUILDING → AWAITING_DEPLOY | BUILD_FAILED
//
// AWAITING_DEPLOY is where a data plane takes over (see ../dataplane.ts).
import path from 'node:path';
import type { Logger } from 'pino';
import type { JobQueue } from '../../../platform/queue/job-queue.ts';
import type { ControlPlaneRepo, ControlPlaneTx, RevisionRow } from '../repo.ts';
import type { RevisionScheduler } from '../service.ts';
import { BuildLog } from './build-log.ts';
import { BuildFailure, buildRevision } from './builder.ts';

const ADVANCE_QUEUE = 'controlplane.revision';
const BUILD_QUEUE = 'controlplane.build';
const GIVE_UP_QUEUE = 'controlplane.revision.failed';

export interface PipelineOptions {
  dataDir: string;
  buildConcurrency: number;
  buildTimeoutSeconds: number;
  heartbeatSeconds: number;
  /** How often a running build checks that its revision still wants it. */
  statusPollMs?: number;
}

interface RevisionJob {
  revisionId: string;
}

export class RevisionPipeline implements RevisionScheduler {
  readonly #repo: ControlPlaneRepo;
  readonly #queue: JobQueue;
  readonly #options: PipelineOptions;
  readonly #logger: Logger;
  readonly #running = new Set<AbortController>();

  constructor(repo: ControlPlaneRepo, queue: JobQueue, options: PipelineOptions, logger: Logger) {
    this.#repo = repo;
    this.#queue = queue;
    this.#options = options;
    this.#logger = logger;
  }

  /** Declares the queues; every process that schedules revisions needs them. */
  async declareQueues(): Promise<void> {
    await this.#queue.createQueue(GIVE_UP_QUEUE, { retryLimit: 10, retryDelay: 5 });
    await this.#queue.createQueue(ADVANCE_QUEUE, { retryLimit: 10, retryDelay: 2, expireInSeconds: 120, deadLetter: GIVE_UP_QUEUE });
    await this.#queue.createQueue(BUILD_QUEUE, {
      // A build lost with its worker is retried from scratch, twice, then given up.
      retryLimit: 2,
      retryDelay: 1,
      heartbeatSeconds: this.#options.heartbeatSeconds,
      expireInSeconds: this.#options.buildTimeoutSeconds * 4 + 300,
      deadLetter: GIVE_UP_QUEUE,
    });
  }

  async schedule(trx: ControlPlaneTx, revisionId: string): Promise<void> {
    await this.#queue.send(ADVANCE_QUEUE, { revisionId }, { singletonKey: revisionId }, trx);
  }

  /** Starts this process's workers. */
  async startWorkers(): Promise<void> {
    await this.#queue.work<RevisionJob>(ADVANCE_QUEUE, { localConcurrency: 4 }, (job) => this.#advance(job.data.revisionId));
    await this.#queue.work<RevisionJob>(BUILD_QUEUE, { localConcurrency: this.#options.buildConcurrency }, (job) => this.#build(job.data.revisionId));
    await this.#queue.work<RevisionJob>(GIVE_UP_QUEUE, { localConcurrency: 1 }, (job) => this.#giveUp(job.data.revisionId));
  }

  /** Stops running builds (their jobs are retried by whichever process runs next). */
  abortBuilds(): void {
    for (const controller of this.#running) controller.abort(new Error('worker stopping'));
  }

  async #advance(revisionId: string): Promise<void> {
    const revision = await this.#repo.getRevisionById(revisionId);
    if (!revision) return;
    if (revision.status === 'CREATING') await this.#repo.transition(revisionId, ['CREATING'], 'QUEUED');
    if (revision.source === 'external_container') {
      if (await this.#repo.transition(revisionId, ['CREATING', 'QUEUED'], 'AWAITING_DEPLOY', { status_message: `Waiting for a data plane to deploy ${revision.image_uri}.` })) {
        const log = await BuildLog.open(this.#repo, revisionId);
        log.write('info', `Image ${revision.image_uri}: nothing to build; waiting for a data plane to deploy it`);
        await log.flush();
      }
      return;
    }
    await this.#repo.transaction(async (trx) => {
      if (await this.#repo.transition(revisionId, ['CREATING', 'QUEUED'], 'AWAITING_BUILD', { status_message: 'Waiting for a build slot.' }, trx)) {
        await this.#queue.send(BUILD_QUEUE, { revisionId }, { singletonKey: revisionId }, trx);
      }
    });
  }

  async #build(revisionId: string): Promise<void> {
    const revision = await this.#repo.getRevisionById(revisionId);
    if (!revision || !['AWAITING_BUILD', 'BUILDING'].includes(revision.status)) return;
    const log = await BuildLog.open(this.#repo, revisionId);
    if (revision.status === 'BUILDING') log.write('warning', 'The worker running this build stopped; building again from the start');
    if (!(await this.#repo.transition(revisionId, ['AWAITING_BUILD', 'BUILDING'], 'BUILDING', { status_message: 'Building.' }))) return;

    const controller = new AbortController();
    this.#running.add(controller);
    const watch = this.#watchRevision(revisionId, controller);
    try {
      const deployment = await this.#sourceConfigOf(revision);
      await buildRevision({
        repoUrl: String(deployment.repo_url),
        repoRef: revision.repo_ref,
        pinnedCommitSha: revision.pinned_commit_sha,
        graphConfigPath: revision.graph_config_path ?? 'langgraph.json',
        installCommand: (deployment.install_command as string | undefined) ?? null,
        buildCommand: (deployment.build_command as string | undefined) ?? null,
        workDir: path.join(this.#options.dataDir, 'builds', revisionId),
        timeoutMs: this.#options.buildTimeoutSeconds * 1000,
        signal: controller.signal,
        log,
        onCommit: async (sha) => {
          await this.#repo.transition(revisionId, ['BUILDING'], 'BUILDING', { repo_commit_sha: sha });
        },
      });
      log.write('info', 'Build succeeded; waiting for a data plane to deploy it');
      await this.#repo.transition(revisionId, ['BUILDING'], 'AWAITING_DEPLOY', { status_message: 'Built; waiting for a data plane to deploy it.' });
    } catch (error) {
      if (controller.signal.aborted) {
        const current = await this.#repo.getRevisionById(revisionId);
        log.write('warning', `Build stopped: revision is ${current?.status ?? 'deleted'}`);
        // Stopping the worker is not a verdict on the build: let the job be retried.
        if (current?.status === 'BUILDING') throw error;
        return;
      }
      if (!(error instanceof BuildFailure)) throw error;
      log.write('error', error.message);
      await this.#repo.transition(revisionId, ['BUILDING'], 'BUILD_FAILED', { status_message: error.message });
    } finally {
      clearInterval(watch);
      this.#running.delete(controller);
      await log.flush();
    }
  }

  async #sourceConfigOf(revision: RevisionRow): Promise<Record<string, unknown>> {
    const deployment = await this.#repo.getDeployment(revision.tenant_id, revision.deployment_id);
    if (!deployment) throw new BuildFailure('the deployment was deleted');
    return deployment.source_config;
  }

  /** Aborts the build when its revision is superseded, interrupted or deleted. */
  #watchRevision(revisionId: string, controller: AbortController): NodeJS.Timeout {
    return setInterval(() => {
      this.#repo.getRevisionById(revisionId).then((current) => {
        if (current?.status !== 'BUILDING') controller.abort(new Error(`revision is ${current?.status ?? 'deleted'}`));
      }, (error: unknown) => this.#logger.warn({ err: error, revisionId }, 'could not check revision status'));
    }, this.#options.statusPollMs ?? 1000);
  }

  /** The pipeline ran out of retries (workers kept dying): end the revision cleanly instead of leaving it in progress. */
  async #giveUp(revisionId: string): Promise<void> {
    const message = 'The pipeline gave up after repeated worker failures.';
    const ended = (await this.#repo.transition(revisionId, ['CREATING', 'QUEUED'], 'CREATE_FAILED', { status_message: message }))
      || (await this.#repo.transition(revisionId, ['AWAITING_BUILD', 'BUILDING'], 'BUILD_FAILED', { status_message: message }));
    if (!ended) return;
    const log = await BuildLog.open(this.#repo, revisionId);
    log.write('error', message);
    await log.flush();
  }
}
