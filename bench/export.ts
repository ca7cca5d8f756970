// Bulk export benchmark: one export of N runs (default 1,000,000; inputs/outputs ~300 bytes of varied JSON) from
// PostgreSQL to the local test S3 server (in its own process), and in the same run the two limits it is measured
// against: the raw keyset-scan rate of the same rows and the raw in-memory Parquet encoding rate (zstd).
// Prints one JSON line. Needs PostgreSQL: DATABASE_URL or TEST_DATABASE_URL (a fresh schema is created and dropped).
//   npx node bench/export.ts [rows]
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { sql } from 'kysely';
import pg from 'pg';
import { ParquetWriter } from 'hyparquet-writer';
import { loadConfig } from '../src/config.ts';
import { startBerth } from '../src/main.ts';
import { apiClient } from '../test/helpers/berth.ts';
import { RunScanner } from '../src/modules/tracing/index.ts';
import { EXPORT_FIELDS } from '../src/modules/exports/index.ts';
import { columnPlan } from '../src/modules/exports/parquet/columns.ts';
import { COMPRESSORS, PartWriter } from '../src/modules/exports/parquet/parquet-file.ts';

// Berth runs here with the V8 settings `npm start` gives it (package.json): re-run with them when missing.
const START_FLAGS = ['--max-semi-space-size=16'];
if (!START_FLAGS.every((flag) => process.execArgv.includes(flag))) {
  const rerun = spawnSync(process.execPath, [...START_FLAGS, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(rerun.status ?? 1);
}

const ROWS = Number(process.argv[2] ?? 1_000_000);
const DATABASE_URL = process.env.DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = `bench_${randomBytes(4).toString('hex')}`;
const DAY = '2026-09-01T00:00:00Z';
const NEXT_DAY = '2026-09-02T00:00:00Z';
const ENCODE_SAMPLE = Math.min(ROWS, 200_000);
// Characters of filler text in each run's inputs (about 300 bytes of JSON by default); large values check that
// memory stays bounded when runs are big.
const INPUT_CHARS = Number(process.env.BENCH_INPUT_CHARS ?? 120);

const s3Process = spawn(process.execPath, ['bench/export-s3-server.ts'], { stdio: ['pipe', 'pipe', 'inherit'] });
const s3Lines = createInterface({ input: s3Process.stdout! })[Symbol.asyncIterator]();
const { endpoint } = JSON.parse((await s3Lines.next()).value ?? '{}');

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'berth-bench-'));
const apiKey = `bench_${randomBytes(12).toString('hex')}`;
const config = loadConfig({
  HOST: '127.0.0.1', PORT: '0', BERTH_DATA_DIR: dataDir, BERTH_API_KEY: apiKey, LOG_LEVEL: 'warn',
  DATABASE_URL, DATABASE_SCHEMA: SCHEMA, BERTH_EXPORT_POLL_INTERVAL_MS: '100',
  // Export tunables can be tried from the environment (BERTH_EXPORT_ROW_GROUP_ROWS=…).
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('BERTH_EXPORT_'))),
});
const berth = await startBerth(config);
const api = apiClient(berth.url!, apiKey);
const tenantId = berth.bootstrap.workspaceId;

try {
  const project = await api('POST', '/sessions', { body: { name: 'bench' } });
  const sessionId: string = project.body.id;
  const seedStart = performance.now();
  // ~300 bytes of varied JSON in inputs and outputs each; spread over one UTC day.
  for (let offset = 0; offset < ROWS; offset += 100_000) {
    const count = Math.min(100_000, ROWS - offset);
    await sql`INSERT INTO runs (tenant_id, id, session_id, trace_id, parent_run_id, parent_run_ids, dotted_order, name, run_type,
        start_time, end_time, inputs, outputs, extra, events, tags, total_tokens, prompt_tokens, completion_tokens, total_cost)
      SELECT ${tenantId}::uuid, g.id, ${sessionId}::uuid, g.id, NULL, '{}'::uuid[],
        to_char(g.t AT TIME ZONE 'UTC', 'YYYYMMDD"T"HH24MISSUS') || 'Z' || g.id::text,
        'step-' || (g.i % 97), (ARRAY['chain', 'llm', 'tool', 'retriever'])[g.i % 4 + 1], g.t, g.t + (g.i % 5000) * interval '1 millisecond',
        jsonb_build_object('messages', jsonb_build_array(jsonb_build_object('role', 'user', 'content', md5(g.i::text) || ' ' || repeat(chr(97 + g.i % 26), ${INPUT_CHARS}::int + g.i % 60))),
          'temperature', (g.i % 10) / 10.0, 'request_id', md5((g.i * 7)::text)),
        jsonb_build_object('generations', jsonb_build_array(jsonb_build_object('text', repeat(md5((g.i * 3)::text), 4 + g.i % 3), 'finish_reason', 'stop')),
          'tokens', g.i % 900),
        jsonb_build_object('metadata', jsonb_build_object('user', 'u' || (g.i % 1000), 'ls_model_name', 'model-' || (g.i % 7))), '[]'::jsonb,
        ARRAY['bench', 'tag-' || (g.i % 13)], g.i % 1000, g.i % 600, g.i % 400, (g.i % 1000) * 0.00001
      FROM (SELECT i, md5('bench' || i::text)::uuid AS id,
              ${DAY}::timestamptz + (i * (86400000.0 / ${ROWS}::int)) * interval '1 millisecond' AS t
            FROM generate_series(${offset}::int, ${offset + count - 1}::int) AS i) g`.execute(berth.db.kysely);
  }
  // Sets hint bits and statistics, so neither the export nor the raw scan pays for the first read after the load.
  await sql`VACUUM ANALYZE runs`.execute(berth.db.kysely);
  const seedSeconds = (performance.now() - seedStart) / 1000;

  // 1. End to end: one export through the API, executed by this process's workers.
  const destination = await api('POST', '/api/v1/bulk-exports/destinations', {
    body: { destination_type: 's3', display_name: 'bench', config: { bucket_name: 'bench', prefix: 'bench', endpoint_url: endpoint }, credentials: { access_key_id: 'AKIABENCH00000000001', secret_access_key: 'bench-secret' } },
  });
  if (destination.status !== 201) throw new Error(`destination: ${JSON.stringify(destination.body)}`);
  const rssBefore = process.memoryUsage().rss;
  let peakRss = rssBefore;
  let atPeak = process.memoryUsage();
  const sampler = setInterval(() => {
    const usage = process.memoryUsage();
    if (usage.rss > peakRss) {
      peakRss = usage.rss;
      atPeak = usage;
    }
  }, 50);
  const exportStart = performance.now();
  const created = await api('POST', '/api/v1/bulk-exports', {
    body: { bulk_export_destination_id: destination.body.id, session_id: sessionId, start_time: DAY, end_time: NEXT_DAY },
  });
  let done: any;
  for (;;) {
    done = (await api('GET', `/api/v1/bulk-exports/${created.body.id}`)).body;
    if (!['CREATED', 'RUNNING'].includes(done.status)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const exportSeconds = (performance.now() - exportStart) / 1000;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  if (done.status !== 'COMPLETED') throw new Error(`export ${done.status}: ${JSON.stringify((await api('GET', `/api/v1/bulk-exports/${created.body.id}/runs`)).body)}`);
  s3Process.stdin!.write('size?\n');
  const { bytes } = JSON.parse((await s3Lines.next()).value ?? '{}');

  // 2. Raw read rate: the same keyset scan, same fields and page size, rows discarded.
  const scanner = new RunScanner(berth.db);
  const readStart = performance.now();
  let after: { start_time: string; id: string } | null = null;
  let read = 0;
  const sample: Record<string, unknown>[] = [];
  for (;;) {
    const page = await scanner.scan({ tenantId, sessionId, startTime: DAY, endTime: NEXT_DAY, fields: EXPORT_FIELDS, after, limit: config.exports.scanPageSize });
    if (page.length === 0) break;
    read += page.length;
    if (sample.length < ENCODE_SAMPLE) sample.push(...page.slice(0, ENCODE_SAMPLE - sample.length));
    const last = page.at(-1)!;
    after = { start_time: last.start_time, id: last.id };
    if (page.length < config.exports.scanPageSize) break;
  }
  const readSeconds = (performance.now() - readStart) / 1000;

  // 3. Raw encoding rate: the same rows (a sample held in memory), same schema, row groups and codec, bytes discarded.
  const plan = columnPlan(EXPORT_FIELDS, 'v1');
  const encodeStart = performance.now();
  let encodedBytes = 0;
  const writer = new ParquetWriter({ writer: new PartWriter(config.exports.partSizeBytes, async (part) => { encodedBytes += part.byteLength; }), schema: plan.schema, codec: 'ZSTD', compressors: COMPRESSORS });
  for (let start = 0; start < sample.length; start += config.exports.rowGroupRows) {
    const group = sample.slice(start, start + config.exports.rowGroupRows);
    await writer.write({ columnData: plan.toColumns(group), rowGroupSize: group.length });
  }
  await writer.finish();
  const encodeSeconds = (performance.now() - encodeStart) / 1000;

  const readRate = read / readSeconds;
  const encodeRate = sample.length / encodeSeconds;
  const endToEnd = ROWS / exportSeconds;
  const limit = Math.min(readRate, encodeRate);
  process.stdout.write(`${JSON.stringify({
    bench: 'export', rows: ROWS, input_chars: INPUT_CHARS, rows_exported: done.progress.rows_written, files: done.progress.files_written,
    export_seconds: round(exportSeconds), rows_per_second: Math.round(endToEnd),
    peak_rss_mb: round(peakRss / 2 ** 20), rss_before_export_mb: round(rssBefore / 2 ** 20), bytes_written: bytes,
    raw_read_rows_per_second: Math.round(readRate), raw_encode_rows_per_second: Math.round(encodeRate), encoded_sample_rows: sample.length,
    encoded_sample_bytes: encodedBytes, end_to_end_vs_slower_limit: round(endToEnd / limit), target_ratio: 0.5, target_peak_rss_mb: 512,
    seed_seconds: round(seedSeconds), engine: 'postgres',
    memory_at_peak_mb: Object.fromEntries(Object.entries(atPeak).map(([key, value]) => [key, round(value / 2 ** 20)])),
  })}\n`);
} finally {
  await berth.close();
  s3Process.stdin!.end();
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE; DROP SCHEMA IF EXISTS ${SCHEMA}_jobs CASCADE`);
  await client.end();
  await rm(dataDir, { recursive: true, force: true });
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
