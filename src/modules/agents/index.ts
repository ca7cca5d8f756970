// The agent server: the LangGraph-compatible API of one graph configuration, on Berth's storage.
// Seams for later: A2A and MCP register beside the other route groups here; a deployment's data plane
// starts this same server with the keys the control plane hands it.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Db } from '../../platform/db/index.ts';
import type { EventBus } from '../../platform/events/event-bus.ts';
import { AssistantService } from './assistants.ts';
import { DbCheckpointSaver } from './checkpointer.ts';
import type { GraphConfig } from './graph-config.ts';
import { GraphRegistry } from './graphs.ts';
import { RunMetrics } from './metrics.ts';
import { RunService } from './runs.ts';
import { RunWorker } from './run-worker.ts';
import { DbStore } from './store.ts';
import { ThreadService } from './threads.ts';
import { WebhookOutbox } from './webhooks.ts';
import { registerAssistantRoutes } from './routes/assistants.ts';
import { registerThreadRoutes } from './routes/threads.ts';
import { registerRunRoutes } from './routes/runs.ts';
import { registerStoreRoutes } from './routes/store.ts';
import { registerCronRoutes } from './routes/crons.ts';
import { CronService } from './crons.ts';
import { CronFires, CronScheduler } from './cron-fires.ts';

export { loadGraphConfig, GraphConfigError, type GraphConfig } from './graph-config.ts';
export { DbCheckpointSaver } from './checkpointer.ts';
export { DbStore } from './store.ts';

export const AGENT_SERVER_VERSION = '0.1.0';

export interface AgentServerSettings {
  /** Runs executed at once by this process; 0 serves the API without executing runs. */
  workers: number;
  leaseSeconds: number;
  maxAttempts: number;
  /** Default config of the system assistants by graph id (LANGGRAPH_CONFIG). */
  assistantDefaults: Record<string, Record<string, unknown>>;
  cronIntervalSeconds: number;
}

export interface AgentServerDeps {
  db: Db;
  bus: EventBus;
  logger: Logger;
  graphConfig: GraphConfig;
  settings: AgentServerSettings;
}

export interface AgentServer {
  registry: GraphRegistry;
  checkpointer: DbCheckpointSaver;
  store: DbStore;
  crons: CronService;
  /** Claim, delivery and recovery of cron fires (the scheduler drives them; tests call the steps). */
  cronFires: CronFires;
  registerRoutes(app: FastifyInstance): void;
  startWorkers(): Promise<void>;
  stopWorkers(): Promise<void>;
  /** Prometheus text. */
  metrics(): Promise<string>;
  /** The `@langchain/langgraph` package the project's graphs use (its own copy when it has one). */
  langgraphVersion: string | undefined;
}

/** Loads `@langchain/langgraph` as the project's graph files see it. */
async function projectLanggraph(projectDir: string): Promise<{ module: any; version: string | undefined }> {
  const require = createRequire(path.join(projectDir, 'package.json'));
  try {
    const entry = require.resolve('@langchain/langgraph');
    const module = await import(pathToFileURL(entry).href);
    let version: string | undefined;
    try {
      const pkgDir = entry.slice(0, entry.lastIndexOf(`${path.sep}dist${path.sep}`));
      version = require(path.join(pkgDir, 'package.json')).version;
    } catch {
      version = undefined;
    }
    return { module, version };
  } catch {
    return { module: await import('@langchain/langgraph'), version: undefined };
  }
}

export async function createAgentServer(deps: AgentServerDeps): Promise<AgentServer> {
  const { db, bus, logger, graphConfig, settings } = deps;
  const checkpointer = new DbCheckpointSaver(db);
  const store = new DbStore(db, graphConfig.store.ttl ?? {});
  const registry = await GraphRegistry.load(graphConfig.graphs, { checkpointer, store });
  const langgraph = await projectLanggraph(graphConfig.projectDir);
  const assistants = new AssistantService(db, registry);
  await assistants.registerSystemAssistants(
    settings.assistantDefaults,
    Object.fromEntries(graphConfig.graphs.map((graph) => [graph.graphId, graph.description])),
  );
  const threads = new ThreadService(db, registry, checkpointer);
  const runs = new RunService({ db, bus, assistants, threads: threads.repo, checkpointer });
  runs.webhooksEnabled = !graphConfig.http.disableWebhooks;
  const crons = new CronService(db, assistants);
  const cronFires = new CronFires(db, runs, logger);
  const runMetrics = new RunMetrics();
  const webhooks = new WebhookOutbox({ db, logger });
  const worker = new RunWorker({
    runs: runs.repo, threads: threads.repo, registry, checkpointer, bus, logger, webhooks, metrics: runMetrics,
    Command: langgraph.module.Command, concurrency: settings.workers, leaseSeconds: settings.leaseSeconds, maxAttempts: settings.maxAttempts,
  });
  if (settings.workers > 0) runs.local = { id: worker.id, leaseSeconds: settings.leaseSeconds, tryReserve: () => worker.tryReserve(), unreserve: () => worker.unreserve(), adopt: (run, firstCheckpoint) => worker.adopt(run, firstCheckpoint) };
  const scheduler = new CronScheduler({ crons, fires: cronFires, logger, intervalSeconds: settings.cronIntervalSeconds, bus });
  let sweeper: NodeJS.Timeout | undefined;

  return {
    registry,
    checkpointer,
    store,
    crons,
    cronFires,
    langgraphVersion: langgraph.version,
    registerRoutes(app) {
      const http = graphConfig.http;
      if (!http.disableAssistants) registerAssistantRoutes(app, assistants, threads, registry);
      if (!http.disableThreads) registerThreadRoutes(app, threads);
      if (!http.disableRuns) {
        registerRunRoutes(app, runs);
        registerCronRoutes(app, crons);
      }
      if (!http.disableStore) registerStoreRoutes(app, store);
    },
    async startWorkers() {
      if (settings.workers > 0) await worker.start();
      webhooks.start();
      await scheduler.start();
      const ttl = graphConfig.store.ttl;
      if (ttl) {
        sweeper = setInterval(() => void store.sweepExpired().catch(() => undefined), ttl.sweepIntervalMinutes * 60_000);
        sweeper.unref();
      }
    },
    async stopWorkers() {
      if (sweeper) clearInterval(sweeper);
      await scheduler.stop();
      await worker.stop();
      await webhooks.stop();
    },
    metrics: () => runMetrics.render(db, worker.activeRuns),
  };
}
