// Helpers for bulk export tests: a test S3 with keys of chosen permissions, projects and runs put into the trace
// store's tables, and DuckDB to read exported Parquet back.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { sql } from 'kysely';
import type { Db } from '../../src/platform/db/index.ts';
import type { ApiClient } from './berth.ts';
import { ALL_S3_PERMISSIONS, startTestS3, type S3Permission, type TestS3 } from './s3/index.ts';

export const FULL_KEY = { accessKeyId: 'AKIAFULLACCESS000001', secretAccessKey: 'full-secret-0123456789' };
export const NO_DELETE_KEY = { accessKeyId: 'AKIANODELETE00000001', secretAccessKey: 'nodelete-secret-0123' };
export const READ_ONLY_KEY = { accessKeyId: 'AKIAREADONLY00000001', secretAccessKey: 'readonly-secret-0123' };

export async function startExportS3(buckets: string[] = ['exports']): Promise<TestS3> {
  const without = (...denied: S3Permission[]) => new Set([...ALL_S3_PERMISSIONS].filter((p) => !denied.includes(p)));
  return startTestS3({
    buckets,
    keys: [
      { ...FULL_KEY, allow: new Set(ALL_S3_PERMISSIONS) },
      { ...NO_DELETE_KEY, allow: without('delete') },
      { ...READ_ONLY_KEY, allow: new Set<S3Permission>(['get', 'list']) },
    ],
  });
}

export function destinationBody(s3: TestS3, overrides: { bucket?: string; prefix?: string; key?: { accessKeyId: string; secretAccessKey: string } | null; endpoint?: string; include_bucket_in_prefix?: boolean } = {}) {
  const key = overrides.key === undefined ? FULL_KEY : overrides.key;
  return {
    destination_type: 's3',
    display_name: 'test bucket',
    config: {
      bucket_name: overrides.bucket ?? 'exports',
      prefix: overrides.prefix ?? 'berth',
      endpoint_url: overrides.endpoint ?? s3.endpoint,
      region: 'us-east-1',
      ...(overrides.include_bucket_in_prefix === undefined ? {} : { include_bucket_in_prefix: overrides.include_bucket_in_prefix }),
    },
    ...(key ? { credentials: { access_key_id: key.accessKeyId, secret_access_key: key.secretAccessKey } } : {}),
  };
}

/** Creates a tracing project through the trace store's API (POST /sessions); returns its id. */
export async function createProject(api: ApiClient, headers: Record<string, string> = {}, name = `project-${randomUUID()}`): Promise<string> {
  const response = await api('POST', '/sessions', { headers, body: { name } });
  if (response.status !== 200 && response.status !== 201) throw new Error(`creating a project answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body.id;
}

export interface SeedRunsOptions {
  tenantId: string;
  sessionId: string;
  /** ISO start of the first run. */
  from: string;
  count: number;
  /** Milliseconds between consecutive runs' start times. */
  stepMs: number;
}

/**
 * Inserts `count` runs with varied values straight into the trace store's runs table, in one statement (for
 * volume and speed; `ingestRuns` goes through the trace store's HTTP ingestion instead).
 * Run i: name "run-<i>", run_type chain/llm/tool by i % 3, tag "even"/"odd", a child of the previous run when i % 4 != 0.
 */
export async function seedRuns(db: Db, options: SeedRunsOptions): Promise<void> {
  await sql`INSERT INTO runs (tenant_id, id, session_id, trace_id, parent_run_id, parent_run_ids, dotted_order, name, run_type,
      start_time, end_time, inputs, outputs, error, extra, events, tags, total_tokens, prompt_tokens, completion_tokens,
      total_cost, prompt_cost, completion_cost, first_token_time, trace_tier)
    SELECT ${options.tenantId}::uuid, g.id, ${options.sessionId}::uuid, g.id,
      CASE WHEN g.i % 4 = 0 THEN NULL ELSE g.parent END,
      CASE WHEN g.i % 4 = 0 THEN '{}'::uuid[] ELSE ARRAY[g.parent] END,
      to_char(g.t AT TIME ZONE 'UTC', 'YYYYMMDD"T"HH24MISSUS') || 'Z' || g.id::text,
      'run-' || g.i, (ARRAY['chain', 'llm', 'tool'])[g.i % 3 + 1],
      g.t, g.t + interval '1 second',
      jsonb_build_object('question', 'q' || g.i, 'n', g.i, 'nested', jsonb_build_object('list', jsonb_build_array(g.i, 'x'))),
      CASE WHEN g.i % 5 = 0 THEN NULL ELSE jsonb_build_object('answer', repeat('a', g.i % 50)) END,
      CASE WHEN g.i % 7 = 0 THEN 'boom ' || g.i ELSE NULL END,
      jsonb_build_object('metadata', jsonb_build_object('i', g.i)), '[]'::jsonb,
      CASE WHEN g.i % 2 = 0 THEN ARRAY['even'] ELSE ARRAY['odd', 'x'] END,
      g.i * 10, g.i * 6, g.i * 4, (g.i * 0.001)::numeric, NULL, (g.i * 0.0005)::numeric,
      g.t + interval '100 milliseconds', NULL
    FROM (
      SELECT i, md5(${options.sessionId} || i::text)::uuid AS id,
        md5(${options.sessionId} || (i - 1)::text)::uuid AS parent,
        ${options.from}::timestamptz + (i * ${options.stepMs}) * interval '1 millisecond' AS t
      FROM generate_series(0, ${options.count - 1}) AS i
    ) g`.execute(db.kysely);
}

/** Reads every Parquet object under `prefix` with DuckDB (through a temp directory). */
export async function readParquet(s3: TestS3, bucket: string, prefix: string, select = '*'): Promise<{ rows: Record<string, any>[]; types: Record<string, string>; files: string[] }> {
  const objects = (await s3.listObjects(bucket, prefix)).filter((object) => object.key.endsWith('.parquet'));
  const dir = await mkdtemp(path.join(os.tmpdir(), 'berth-parquet-'));
  try {
    const paths: string[] = [];
    for (const [index, object] of objects.entries()) {
      const file = path.join(dir, `${index}.parquet`);
      await writeFile(file, (await s3.getObject(bucket, object.key))!);
      paths.push(file);
    }
    if (paths.length === 0) return { rows: [], types: {}, files: [] };
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      await connection.run("SET TimeZone = 'UTC'");
      const list = `[${paths.map((file) => `'${file}'`).join(', ')}]`;
      const described = await connection.runAndReadAll(`DESCRIBE SELECT ${select} FROM read_parquet(${list})`);
      const types = Object.fromEntries(described.getRowObjectsJson().map((row: any) => [row.column_name, row.column_type]));
      const result = await connection.runAndReadAll(`SELECT ${select} FROM read_parquet(${list})`);
      return { rows: result.getRowObjectsJson() as Record<string, any>[], types, files: objects.map((object) => object.key) };
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const FAST_EXPORT_ENV: Record<string, string> = {
  BERTH_EXPORT_POLL_INTERVAL_MS: '50',
  BERTH_EXPORT_RETRY_DELAY_SECONDS: '0',
  BERTH_EXPORT_LEASE_SECONDS: '3',
  BERTH_EXPORT_HEARTBEAT_SECONDS: '1',
};

function runId(seed: string, i: number): string {
  const hex = Buffer.from(`${seed}:${i}`).toString('hex').padEnd(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${i.toString(16).padStart(12, '0')}`;
}

function dottedSegment(startIso: string, id: string): string {
  return `${startIso.replace(/[-:]/g, '').replace('.', '').replace('Z', '')}Z${id}`;
}

/**
 * Posts `count` runs to the trace store's batch ingestion (POST /runs/batch) into project `sessionName`, with
 * the same shape as seedRuns: run i is named "run-<i>", run_type chain/llm/tool by i % 3, a child of run i-1
 * when i % 4 != 0, tags even/odd, an error when i % 7 == 0, no outputs when i % 5 == 0, and for LLM runs
 * usage metadata of i·6 input, i·4 output and i·10 total tokens costing i·0.001.
 * Returns the project's id.
 */
export async function ingestRuns(api: (method: string, url: string, options?: { body?: unknown }) => Promise<{ status: number; body: any }>, sessionName: string, options: { from: string; count: number; stepMs: number; seed?: string }): Promise<string> {
  const seed = options.seed ?? sessionName;
  const fromMs = Date.parse(options.from);
  const dotted: string[] = [];
  const ids: string[] = [];
  const traces: string[] = [];
  const batch: Record<string, unknown>[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const response = await api('POST', '/runs/batch', { body: { post: batch.splice(0) } });
    if (response.status !== 202) throw new Error(`ingest answered ${response.status}: ${JSON.stringify(response.body)}`);
  };
  for (let i = 0; i < options.count; i++) {
    const id = runId(seed, i);
    const start = new Date(fromMs + i * options.stepMs).toISOString().replace('Z', '000Z');
    const isRoot = i % 4 === 0;
    dotted[i] = isRoot ? dottedSegment(start, id) : `${dotted[i - 1]}.${dottedSegment(start, id)}`;
    ids[i] = id;
    traces[i] = isRoot ? id : traces[i - 1]!;
    const runType = ['chain', 'llm', 'tool'][i % 3]!;
    const run: Record<string, unknown> = {
      id, name: `run-${i}`, run_type: runType, session_name: sessionName,
      start_time: start, end_time: new Date(fromMs + i * options.stepMs + 1000).toISOString(),
      trace_id: traces[i], dotted_order: dotted[i], parent_run_id: isRoot ? null : ids[i - 1],
      inputs: { question: `q${i}`, n: i, nested: { list: [i, 'x'] } },
      extra: { metadata: { i, ...(runType === 'llm' ? { usage_metadata: { input_tokens: i * 6, output_tokens: i * 4, total_tokens: i * 10, total_cost: i * 0.001 } } : {}) } },
      tags: i % 2 === 0 ? ['even'] : ['odd', 'x'],
    };
    if (i % 5 !== 0) run.outputs = { answer: 'a'.repeat(i % 50) };
    if (i % 7 === 0) run.error = `boom ${i}`;
    batch.push(run);
    if (batch.length === 200) await flush();
  }
  await flush();
  const projects = await api('GET', `/sessions?name=${encodeURIComponent(sessionName)}`);
  if (projects.status !== 200 || projects.body.length !== 1) throw new Error(`project ${sessionName} not found: ${JSON.stringify(projects.body)}`);
  return projects.body[0].id;
}
