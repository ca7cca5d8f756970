// The only reader of process.env. Everything else receives a frozen Config.
import path from 'node:path';
import type { ExportSettings } from './modules/exports/settings.ts';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** postgres://… selects PostgreSQL; undefined selects embedded PGlite in dataDir. */
  databaseUrl: string | undefined;
  /** PostgreSQL schema for Berth's tables (tests use one schema per run). */
  databaseSchema: string;
  /** redis://… carries events between processes by Redis pub/sub instead of PostgreSQL NOTIFY. */
  redisUrl: string | undefined;
  /** Admin API key to create on first start; a generated one is written to dataDir otherwise. */
  bootstrapApiKey: string | undefined;
  /** 32-byte key (hex or base64) for secrets at rest; generated into dataDir when absent. */
  secretKey: string | undefined;
  logLevel: LogLevel;
  role: 'all' | 'api' | 'worker';
  controlPlane: {
    /** Concurrent builds per worker process. */
    buildConcurrency: number;
    /** Kill a build step that runs longer than this. */
    buildTimeoutSeconds: number;
    /** How often a running build proves it is alive; a silent one is retried elsewhere. */
    jobHeartbeatSeconds: number;
    /** How often the job supervisor looks for dead jobs. */
    superviseIntervalSeconds: number;
  };
  tracing: {
    /** Largest trace ingest request body, after decompression (413 beyond); /info advertises 1 MiB less. */
    maxBodyBytes: number;
  };
  /** Bulk export workers and limits (spec defaults: 45 runs per export, 15 exports per workspace, 20 retries 30 s apart, 4 h per run, 72 h per export). */
  exports: ExportSettings;
  /** `berth agent-server`: keys, run workers, queue leases. */
  agentServer: AgentServerSettings;
}

export interface AgentServerSettings {
  /** Keys accepted in X-Api-Key (BERTH_API_KEY, comma-separated). */
  apiKeys: string[];
  /** Runs executed at once by one process (N_JOBS_PER_WORKER, as the official server names it). */
  workers: number;
  /** A running run's lease; a run whose process died is resumed by another after this. */
  leaseSeconds: number;
  /** Attempts of a run before it fails for good (a crash costs one). */
  maxAttempts: number;
  /** Longest sleep of the cron scheduler between checks (it wakes earlier for a due cron). */
  cronIntervalSeconds: number;
  /** LANGGRAPH_CONFIG: default config (and `context`) of each graph's system assistant. */
  assistantDefaults: Record<string, Record<string, unknown>>;
}

type Env = Record<string, string | undefined>;

export class ConfigError extends Error {}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function jsonObject(env: Env, name: string): Record<string, Record<string, unknown>> {
  const raw = env[name];
  if (!raw) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ConfigError(`${name} must be a JSON object, got "${raw}"`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigError(`${name} must be a JSON object`);
  return value as Record<string, Record<string, unknown>>;
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const redisUrl = env.REDIS_URL || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError('REDIS_URL must start with redis:// or rediss://');
  }
  const schema = env.DATABASE_SCHEMA || 'public';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new ConfigError(`DATABASE_SCHEMA must be a lower-case SQL identifier, got "${schema}"`);
  }
  const config: Config = {
    host: env.HOST || '127.0.0.1',
    port: int(env, 'PORT', 8080, 0, 65535),
    dataDir: path.resolve(env.BERTH_DATA_DIR || '.berth'),
    databaseUrl,
    databaseSchema: schema,
    redisUrl,
    bootstrapApiKey: env.BERTH_API_KEY || undefined,
    secretKey: env.BERTH_SECRET_KEY || undefined,
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    role: oneOf(env, 'BERTH_ROLE', 'all', ['all', 'api', 'worker']),
    controlPlane: {
      buildConcurrency: int(env, 'BERTH_BUILD_CONCURRENCY', 2, 1, 64),
      buildTimeoutSeconds: int(env, 'BERTH_BUILD_TIMEOUT_SECONDS', 1800, 1, 86400),
      jobHeartbeatSeconds: int(env, 'BERTH_JOB_HEARTBEAT_SECONDS', 10, 10, 3600),
      superviseIntervalSeconds: int(env, 'BERTH_SUPERVISE_INTERVAL_SECONDS', 10, 1, 3600),
    },
    tracing: {
      // 25 MiB, so that /info advertises the SDK's own default batch size (24 MiB).
      maxBodyBytes: int(env, 'BERTH_TRACE_MAX_BODY_BYTES', 26_214_400, 2 * 1024 * 1024, 1024 * 1024 * 1024),
    },
    exports: {
      workerConcurrency: int(env, 'BERTH_EXPORT_WORKER_CONCURRENCY', 4, 1, 256),
      maxRunsPerExport: int(env, 'BULK_EXPORT_MAX_CONCURRENT_RUNS', 45, 1, 10_000),
      maxExportsPerWorkspace: int(env, 'DATA_EXPORT_RUN_LIMIT', 15, 1, 10_000),
      retryLimit: int(env, 'BERTH_EXPORT_RETRY_LIMIT', 20, 0, 1000),
      retryDelaySeconds: int(env, 'BERTH_EXPORT_RETRY_DELAY_SECONDS', 30, 0, 86_400),
      runTimeoutSeconds: int(env, 'BERTH_EXPORT_RUN_TIMEOUT_SECONDS', 4 * 3600, 1, 30 * 86_400),
      workflowTimeoutSeconds: int(env, 'BERTH_EXPORT_WORKFLOW_TIMEOUT_SECONDS', 72 * 3600, 1, 365 * 86_400),
      leaseSeconds: int(env, 'BERTH_EXPORT_LEASE_SECONDS', 60, 1, 3600),
      heartbeatSeconds: int(env, 'BERTH_EXPORT_HEARTBEAT_SECONDS', 10, 1, 3600),
      pollIntervalMs: int(env, 'BERTH_EXPORT_POLL_INTERVAL_MS', 1000, 10, 60_000),
      rowsPerFile: int(env, 'BERTH_EXPORT_ROWS_PER_FILE', 500_000, 1, 100_000_000),
      rowGroupRows: int(env, 'BERTH_EXPORT_ROW_GROUP_ROWS', 5_000, 1, 1_000_000),
      scanPageSize: int(env, 'BERTH_EXPORT_SCAN_PAGE_SIZE', 2_500, 1, 100_000),
      partSizeBytes: int(env, 'BERTH_EXPORT_PART_SIZE_BYTES', 8 * 1024 * 1024, 5 * 1024 * 1024, 512 * 1024 * 1024),
      compression: oneOf(env, 'BERTH_EXPORT_COMPRESSION', 'zstd', ['zstd', 'snappy', 'gzip', 'none']),
    },
    agentServer: {
      apiKeys: (env.BERTH_API_KEY ?? '').split(',').map((key) => key.trim()).filter((key) => key !== ''),
      workers: int(env, 'N_JOBS_PER_WORKER', 10, 0, 1000),
      leaseSeconds: int(env, 'BERTH_AGENT_LEASE_SECONDS', 30, 1, 3600),
      maxAttempts: int(env, 'BERTH_AGENT_MAX_ATTEMPTS', 3, 1, 100),
      cronIntervalSeconds: int(env, 'BERTH_AGENT_CRON_INTERVAL_SECONDS', 60, 1, 3600),
      assistantDefaults: jsonObject(env, 'LANGGRAPH_CONFIG'),
    },
    ...overrides,
  };
  return Object.freeze(config);
}
