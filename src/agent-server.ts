// Composition root of `berth agent-server`: one graph configuration served on its own port, on the
// same storage engines as Berth (PGlite in BERTH_DATA_DIR, or PostgreSQL with DATABASE_URL).
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { ConfigError } from './config.ts';
import { createLogger } from './platform/logging.ts';
import { storageOptions, type Db } from './platform/db/index.ts';
import { openStorage } from './platform/db/storage.ts';
import { LocalEventBus, PostgresEventBus, type EventBus } from './platform/events/event-bus.ts';
import { RedisEventBus } from './platform/events/redis-event-bus.ts';
import { createHttpServer } from './platform/http/server.ts';
import { installStaticKeyAuth } from './platform/auth/static-keys.ts';
import { AGENT_SERVER_VERSION, createAgentServer, GraphConfigError, loadGraphConfig, type AgentServer } from './modules/agents/index.ts';
import { mountUserApp, installCors } from './modules/agents/http-app.ts';

export interface RunningAgentServer {
  app: FastifyInstance;
  url: string;
  db: Db;
  logger: Logger;
  server: AgentServer;
  close(): Promise<void>;
}

export interface AgentServerStartOptions {
  configFile: string;
  logger?: Logger;
  pgliteDir?: string;
}

const PUBLIC = (url: string) => url === '/ok' || url === '/openapi.json' || url === '/docs' || url.startsWith('/docs/');

/**
 * The Redis channel of the agent servers sharing one database. One Redis may serve several databases,
 * so the channel names this one (server, database name and schema; never the credentials).
 */
export function redisEventChannel(databaseUrl: string, schema: string): string {
  const database = URL.parse(databaseUrl);
  const identity = createHash('sha256').update(`${database?.host}${database?.pathname}|${schema}`).digest('hex').slice(0, 16);
  return `berth:agents:${identity}`;
}

/**
 * Events between the processes sharing one database: Redis pub/sub with REDIS_URL, PostgreSQL NOTIFY
 * otherwise. One process owns an embedded database, so in-process events are complete there.
 */
async function openEventBus(config: Config, db: Db): Promise<EventBus> {
  if (db.engine !== 'postgres') return new LocalEventBus();
  if (!config.redisUrl) return PostgresEventBus.start(db, `berth_agents_${db.schema}`);
  try {
    return await RedisEventBus.start(config.redisUrl, redisEventChannel(db.native.engine === 'postgres' ? db.native.url : '', db.schema));
  } catch (error) {
    throw new ConfigError(`REDIS_URL: cannot connect to Redis (${(error as Error).message})`);
  }
}

export async function startAgentServer(config: Config, options: AgentServerStartOptions): Promise<RunningAgentServer> {
  const logger = options.logger ?? createLogger(config.logLevel);
  let graphConfig;
  try {
    graphConfig = await loadGraphConfig(options.configFile);
  } catch (error) {
    if (error instanceof GraphConfigError) throw new ConfigError(error.message);
    throw error;
  }
  if (config.agentServer.apiKeys.length === 0) {
    throw new ConfigError('BERTH_API_KEY must give the agent server at least one API key (comma-separated for several).');
  }
  // The graphs read their settings from the environment, as they do under the official servers.
  for (const [key, value] of Object.entries(graphConfig.env)) process.env[key] ??= value;

  const { db, shutdown } = await openStorage(storageOptions(config, options.pgliteDir), logger);
  const close = () => shutdown.closeAll();
  try {
    const bus = await openEventBus(config, db);
    shutdown.add(() => bus.close());
    let server: AgentServer;
    try {
      server = await createAgentServer({ db, bus, logger, graphConfig, settings: config.agentServer });
    } catch (error) {
      if (error instanceof GraphConfigError) throw new ConfigError(error.message);
      throw error;
    }
    const app = await createHttpServer({
      logger,
      openapi: { title: 'Berth Agent Server', version: AGENT_SERVER_VERSION, description: 'LangGraph-compatible agent server: assistants, threads, runs, crons, store.' },
    });
    installCors(app, graphConfig.http.cors);
    installStaticKeyAuth(app, config.agentServer.apiKeys, PUBLIC);
    if (graphConfig.http.app) await mountUserApp(app, graphConfig.http.app);
    if (!graphConfig.http.disableMeta) {
      app.get('/info', { schema: { tags: ['System'], summary: 'Server Information' } }, async () => ({
        version: AGENT_SERVER_VERSION,
        langgraph_js_version: server.langgraphVersion,
        context: 'js',
        flags: { assistants: true, crons: true, langsmith: false, langsmith_tracing_replicas: false },
        host: { kind: 'self-hosted', project_id: null, revision_id: null, tenant_id: null },
      }));
      app.get('/metrics', { schema: { tags: ['System'], summary: 'Prometheus metrics' } }, async (_request, reply) =>
        reply.type('text/plain; version=0.0.4').send(await server.metrics()));
    }
    server.registerRoutes(app);
    const url = await app.listen({ host: config.host, port: config.port });
    shutdown.add(() => app.close());
    await server.startWorkers();
    // Stops first: runs in flight go back to the queue before the database closes.
    shutdown.add(() => server.stopWorkers());
    return { app, url, db, logger, server, close };
  } catch (error) {
    await close();
    throw error;
  }
}
