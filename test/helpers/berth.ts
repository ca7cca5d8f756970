// Starts a real Berth (HTTP, workers, storage) for a test, on the engine chosen by BERTH_TEST_ENGINE.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { startBerth, type Berth, type StartOptions } from '../../src/main.ts';
import { dropSchema, ENGINE, TEST_DATABASE_URL, uniqueSchema } from './engine.ts';

export interface TestBerth {
  berth: Berth;
  url: string;
  apiKey: string;
  workspaceId: string;
  dataDir: string;
  schema: string;
  api: ApiClient;
  /** Stops the server; with keepData the next startTestBerth({dataDir, schema}) sees the same database. */
  close(options?: { keepData?: boolean }): Promise<void>;
}

export interface TestBerthOptions {
  env?: Record<string, string>;
  /** Reuse storage of an earlier server (restart tests). */
  dataDir?: string;
  schema?: string;
  apiKey?: string;
  /** Passed to startBerth (e.g. a controllable clock for bulk export). */
  startOptions?: StartOptions;
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export type ApiClient = (method: string, url: string, options?: { body?: unknown; rawBody?: string; headers?: Record<string, string>; key?: string | null }) => Promise<ApiResponse>;

export function apiClient(baseUrl: string, apiKey: string): ApiClient {
  return async (method, url, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? apiKey : options.key;
    if (key !== null) headers['x-api-key'] ??= key;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const response = await fetch(`${baseUrl}${url}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body: parsed as any, headers: response.headers };
  };
}

export function testEnv(options: { dataDir: string; schema: string; apiKey: string; env?: Record<string, string> }): Record<string, string> {
  return {
    HOST: '127.0.0.1',
    PORT: '0',
    BERTH_DATA_DIR: options.dataDir,
    BERTH_API_KEY: options.apiKey,
    LOG_LEVEL: process.env.BERTH_TEST_LOG_LEVEL ?? 'silent',
    BERTH_SUPERVISE_INTERVAL_SECONDS: '1',
    ...(ENGINE === 'postgres' ? { DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: options.schema } : {}),
    ...options.env,
  };
}

export async function startTestBerth(options: TestBerthOptions = {}): Promise<TestBerth> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'berth-test-')));
  const schema = options.schema ?? uniqueSchema();
  const apiKey = options.apiKey ?? `test_${randomBytes(16).toString('hex')}`;
  const config = loadConfig(testEnv({ dataDir, schema, apiKey, env: options.env }));
  const berth = await startBerth(config, options.startOptions);
  const url = berth.url!;
  return {
    berth, url, apiKey, dataDir, schema,
    workspaceId: berth.bootstrap.workspaceId,
    api: apiClient(url, apiKey),
    async close({ keepData = false } = {}) {
      await berth.close();
      if (keepData) return;
      if (ENGINE === 'postgres') await dropSchema(schema);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A new workspace of the server's organization and a client holding a key of that workspace only. */
export async function otherWorkspace(server: TestBerth, name: string): Promise<{ workspaceId: string; api: ApiClient }> {
  const workspace = (await server.api('POST', '/api/v1/workspaces', { body: { name } })).body;
  const key = (await server.api('POST', '/api/v1/api-keys', { body: { workspace_id: workspace.id } })).body.key;
  return { workspaceId: workspace.id, api: apiClient(server.url, key) };
}

/** Polls until check returns a value (not undefined), or fails after timeoutMs. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 30_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
