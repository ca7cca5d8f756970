// Helpers for bulk export tests: a test S3 with keys of chosen permissions, projects and runs put into the trace
// store's tables, and DuckDB to read exported Parquet back.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { sql } from 'kysely';
import type { Db } from '../../src/platform/db/index.ts';
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

export async function createProject(db: Db, tenantId: string, name = `project-${randomUUID()}`): Promise<string> {
  const id = randomUUID();
  await sql`INSERT INTO tracer_sessions (id, tenant_id, name) VALUES (${id}, ${tenantId}, ${name})`.execute(db.kysely);
  return id;
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
 * Inserts `count` runs with varied values straight into the trace store's runs table, in one statement.
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
