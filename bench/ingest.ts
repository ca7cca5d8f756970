// Trace ingestion benchmark. Prints one JSON line.
//
// (1) Server side: multipart batches captured from the real langsmith SDK are replayed (ids rewritten per
//     round, bodies pre-encoded before timing) over several keep-alive connections into a Berth process;
//     runs/s stored is compared with the same rows written by one multi-row INSERT straight into the same
//     engine and table (the raw insert rate measured in this run). On PostgreSQL, and on PGlite.
// (2) End to end: one SDK client tracing a nested pipeline against Berth, against the same client tracing
//     against a null server that accepts every request (the SDK's own ceiling).
//
// Usage: npx node bench/ingest.ts [--traces N] [--rounds N] [--connections N] [--trials N] [--e2e-trials N]
//        BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test (default) selects the PostgreSQL server.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import pg from 'pg';
import { Client } from 'langsmith';
import { traceable } from 'langsmith/traceable';

const { values: args } = parseArgs({
  options: {
    traces: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '4' },
    connections: { type: 'string', default: '4' },
    'e2e-traces': { type: 'string', default: '1000' },
    trials: { type: 'string', default: '3' },
    'e2e-trials': { type: 'string', default: '5' },
  },
});
const TRACES = Number(args.traces);
const ROUNDS = Number(args.rounds);
const CONNECTIONS = Number(args.connections);
const E2E_TRACES = Number(args['e2e-traces']);
// Each figure is the best of several trials: this machine is shared, and a busy neighbour only ever slows a trial down.
const TRIALS = Number(args.trials);
// End to end trials are short (~2 s) and the noisiest: more of them.
const E2E_TRIALS = Number(args['e2e-trials']);
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROOT = path.resolve(import.meta.dirname, '..');

interface Captured {
  contentType: string;
  body: Buffer;
  /** Content-Encoding of body, when pre-encoded for replay. */
  encoding?: string;
}

/**
 * A server that answers /info with Berth's own flags (so the SDK behaves the same, gzip included), accepts
 * every request, and with `keep` stores each multipart body (decompressed).
 */
async function startNullServer(keep: boolean): Promise<{ url: string; captured: Captured[]; close(): Promise<void> }> {
  const captured: Captured[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => {
      if (keep) chunks.push(chunk);
    });
    request.on('end', () => {
      if (request.url?.endsWith('/info')) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ version: 'null', batch_ingest_config: { use_multipart_endpoint: true, size_limit: 100, size_limit_bytes: 25165824 }, instance_flags: { gzip_body_enabled: true } }));
        return;
      }
      if (keep && request.url?.endsWith('/runs/multipart')) {
        const raw = Buffer.concat(chunks);
        captured.push({ contentType: String(request.headers['content-type']), body: request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw });
      }
      response.writeHead(202, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, captured, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** The traced workload: a root chain with a retriever, an LLM call with usage, and a tool. 4 runs per trace. */
async function traceWorkload(apiUrl: string, apiKey: string, traces: number, project: string): Promise<{ runs: number; seconds: number }> {
  const client = new Client({ apiUrl, apiKey, autoBatchTracing: true });
  const options = { client, project_name: project, tracingEnabled: true };
  const retrieve = traceable(async (q: string) => ({ docs: [`${q} doc one`, `${q} doc two`] }), { ...options, name: 'retrieve', run_type: 'retriever' });
  const llm = traceable(async (prompt: string) => ({ text: `answer to ${prompt.slice(0, 40)}`, usage_metadata: { input_tokens: 120, output_tokens: 40, total_tokens: 160 } }), { ...options, name: 'llm', run_type: 'llm', metadata: { ls_model_name: 'bench-1' } });
  const tool = traceable(async (x: number) => ({ value: x * 2 }), { ...options, name: 'tool', run_type: 'tool' });
  const pipeline = traceable(async (question: string, i: number) => {
    const { docs } = await retrieve(question);
    const { text } = await llm(`${question}\n${docs.join('\n')}`);
    await tool(i);
    return { text };
  }, { ...options, name: 'pipeline', tags: ['bench'] });
  const started = performance.now();
  for (let i = 0; i < traces; i++) await pipeline(`question number ${i} about harbors and berths`, i);
  await client.awaitPendingTraceBatches();
  return { runs: traces * 4, seconds: (performance.now() - started) / 1000 };
}

async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface BerthProcess {
  url: string;
  apiKey: string;
  schema: string | undefined;
  dataDir: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Berth in its own process (the SDK and the replay client must not share its event loop). */
async function startBerthProcess(engine: 'postgres' | 'pglite'): Promise<BerthProcess> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'berth-bench-'));
  const apiKey = `bench_${randomBytes(12).toString('hex')}`;
  const schema = engine === 'postgres' ? `bench_${randomBytes(4).toString('hex')}` : undefined;
  const port = await freePort();
  const env = {
    ...process.env, BERTH_DATA_DIR: dataDir, BERTH_API_KEY: apiKey, LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: String(port),
    ...(schema ? { DATABASE_URL, DATABASE_SCHEMA: schema } : { DATABASE_URL: '' }),
  };
  // BENCH_BERTH_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the server.
  const nodeArgs = process.env.BENCH_BERTH_NODE_ARGS ? process.env.BENCH_BERTH_NODE_ARGS.split(' ') : [];
  const child = spawn(process.execPath, [...nodeArgs, path.join(ROOT, 'src/cli.ts'), 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`berth exited with ${code}: ${output}`)));
  });
  child.stdout!.resume();
  return {
    url: `http://127.0.0.1:${port}`, apiKey, schema, dataDir, child,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      if (schema) await withPg((client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; DROP SCHEMA IF EXISTS ${schema}_jobs CASCADE`));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function withPg<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** One replay round: every run id (and so every dotted_order) replaced consistently across all bodies. */
function rewriteRound(bodies: Captured[]): Captured[] {
  const ids = new Map<string, string>();
  return bodies.map(({ contentType, body }) => ({
    contentType,
    body: Buffer.from(body.toString('latin1').replace(UUID, (id) => {
      let fresh = ids.get(id);
      if (!fresh) {
        fresh = randomUUID();
        ids.set(id, fresh);
      }
      return fresh;
    }), 'latin1'),
  }));
}

async function replay(url: string, apiKey: string, bodies: Captured[]): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const target = new URL('/runs/multipart', url);
  let next = 0;
  const send = (item: Captured) => new Promise<void>((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': item.contentType, 'content-length': item.body.length, 'x-api-key': apiKey };
    if (item.encoding) headers['content-encoding'] = item.encoding;
    const request = http.request(target, { method: 'POST', agent, headers }, (response) => {
      response.resume();
      response.on('end', () => (response.statusCode === 202 ? resolve() : reject(new Error(`replay answered ${response.statusCode}`))));
    });
    request.on('error', reject);
    request.end(item.body);
  });
  const started = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (next < bodies.length) await send(bodies[next++]!);
  }));
  agent.destroy();
  return (performance.now() - started) / 1000;
}

/** The rows of the captured runs (post merged with patch), for the raw insert baseline. */
function capturedRows(bodies: Captured[]): Map<string, Record<string, unknown>> {
  const runs = new Map<string, Record<string, unknown>>();
  for (const { contentType, body } of bodies) {
    const boundary = /boundary=(.+)$/.exec(contentType)![1]!;
    for (const chunk of body.toString('utf8').split(`--${boundary}`)) {
      const name = /name="([^"]+)"/.exec(chunk)?.[1];
      if (!name) continue;
      const data = chunk.slice(chunk.indexOf('\r\n\r\n') + 4, chunk.lastIndexOf('\r\n'));
      const [, id, field] = name.split('.');
      const run = runs.get(id!) ?? {};
      if (field) run[field] = JSON.parse(data);
      else Object.assign(run, JSON.parse(data));
      runs.set(id!, run);
    }
  }
  return runs;
}

const RAW_COLUMNS: [string, string][] = [
  ['tenant_id', 'uuid'], ['id', 'uuid'], ['session_id', 'uuid'], ['trace_id', 'uuid'], ['parent_run_id', 'uuid'], ['dotted_order', 'text'],
  ['name', 'text'], ['run_type', 'text'], ['start_time', 'timestamptz'], ['end_time', 'timestamptz'], ['inputs', 'jsonb'], ['outputs', 'jsonb'],
  ['extra', 'jsonb'], ['tags', 'text'], ['posted', 'boolean'], ['patched', 'boolean'],
];

/**
 * Rows per second of ONE multi-row INSERT (… SELECT FROM unnest of one array per column) of all the captured
 * rows, ids rewritten per round, into the runs table of the same engine (same indexes and constraints).
 */
async function rawInsertRate(query: (text: string, params: unknown[]) => Promise<unknown>, tenantId: string, sessionId: string, runs: Map<string, Record<string, unknown>>, rounds: number): Promise<number> {
  const columns: unknown[][] = RAW_COLUMNS.map(() => []);
  for (let round = 0; round < rounds; round++) {
    const ids = new Map<string, string>();
    const fresh = (id: string) => ids.get(id) ?? (ids.set(id, randomUUID()), ids.get(id)!);
    for (const run of runs.values()) {
      const start = typeof run.start_time === 'number' ? new Date(run.start_time).toISOString() : run.start_time;
      const end = typeof run.end_time === 'number' ? new Date(run.end_time).toISOString() : (run.end_time ?? null);
      const row = [tenantId, fresh(run.id as string), sessionId, fresh(run.trace_id as string), run.parent_run_id ? fresh(run.parent_run_id as string) : null,
        (run.dotted_order as string).replace(UUID, fresh), run.name, run.run_type, start, end, JSON.stringify(run.inputs ?? null), JSON.stringify(run.outputs ?? null),
        JSON.stringify(run.extra ?? null), `{${((run.tags as string[] | undefined) ?? []).map((tag) => JSON.stringify(tag)).join(',')}}`, true, true];
      row.forEach((value, index) => columns[index]!.push(value));
    }
  }
  const rows = columns[0]!.length;
  const select = RAW_COLUMNS.map(([name], index) => (name === 'tags' ? `c${index}::text[]` : `c${index}`));
  const unnest = RAW_COLUMNS.map(([, type], index) => `$${index + 1}::${type}[]`);
  const started = performance.now();
  await query(
    `INSERT INTO runs (${RAW_COLUMNS.map(([name]) => name).join(', ')}) SELECT ${select.join(', ')} FROM unnest(${unnest.join(', ')}) AS u(${RAW_COLUMNS.map((_, index) => `c${index}`).join(', ')})`,
    columns,
  );
  return rows / ((performance.now() - started) / 1000);
}

async function serverSide(engine: 'postgres' | 'pglite', bodies: Captured[], runs: Map<string, Record<string, unknown>>) {
  const berth = await startBerthProcess(engine);
  try {
    // Warm-up: two bodies create the project and warm the JIT.
    await replay(berth.url, berth.apiKey, rewriteRound(bodies.slice(0, 2)));
    let ingestRate = 0;
    let seconds = 0;
    for (let trial = 0; trial < TRIALS; trial++) {
      // Pre-encoded as the SDK sends them to Berth: gzip, since /info enables it.
      const rounds = Array.from({ length: ROUNDS }, () => rewriteRound(bodies)).flat().map((item) => ({ ...item, body: gzipSync(item.body), encoding: 'gzip' }));
      const elapsed = await replay(berth.url, berth.apiKey, rounds);
      if (runs.size * ROUNDS / elapsed > ingestRate) {
        ingestRate = runs.size * ROUNDS / elapsed;
        seconds = elapsed;
      }
    }
    const stored = runs.size * ROUNDS;
    const expected = stored * TRIALS + runsInWarmup(bodies);
    const bestOf = async (measure: () => Promise<number>) => {
      let best = 0;
      for (let trial = 0; trial < TRIALS; trial++) best = Math.max(best, await measure());
      return best;
    };
    let rawRate: number;
    if (engine === 'postgres') {
      rawRate = await withPg(async (client) => {
        await client.query(`SET search_path = ${berth.schema}`);
        const [{ tenant_id: tenantId, id: sessionId }] = (await client.query('SELECT tenant_id, id FROM tracer_sessions LIMIT 1')).rows;
        const count = Number((await client.query('SELECT count(*) FROM runs')).rows[0].count);
        if (count !== expected) throw new Error(`expected ${expected} runs stored, found ${count}`);
        return bestOf(() => rawInsertRate((text, params) => client.query(text, params), tenantId, sessionId, runs, ROUNDS));
      });
    } else {
      // PGlite has one writer: measure the raw rate in the same engine after stopping Berth.
      await stopKeepingData(berth);
      const { PGlite } = await import('@electric-sql/pglite');
      const db = await PGlite.create(path.join(berth.dataDir, 'pgdata'));
      const [{ tenant_id: tenantId, id: sessionId }] = (await db.query<any>('SELECT tenant_id, id FROM tracer_sessions LIMIT 1')).rows;
      const count = Number((await db.query<any>('SELECT count(*) FROM runs')).rows[0].count);
      if (count !== expected) throw new Error(`expected ${expected} runs stored, found ${count}`);
      rawRate = await bestOf(() => rawInsertRate((text, params) => db.query(text, params as any[]), tenantId, sessionId, runs, ROUNDS));
      await db.close();
    }
    return { runs_per_s: Math.round(ingestRate), raw_insert_rows_per_s: Math.round(rawRate), ratio: Number((ingestRate / rawRate).toFixed(3)), runs: stored, seconds: Number(seconds.toFixed(2)) };
  } finally {
    await berth.stop().catch(() => undefined);
  }
}

function runsInWarmup(bodies: Captured[]): number {
  return capturedRows(bodies.slice(0, 2)).size;
}

async function stopKeepingData(berth: BerthProcess): Promise<void> {
  const exited = new Promise((resolve) => berth.child.once('exit', resolve));
  berth.child.kill('SIGTERM');
  await exited;
  berth.stop = async () => rm(berth.dataDir, { recursive: true, force: true });
}

async function endToEnd() {
  const nullServer = await startNullServer(false);
  const berth = await startBerthProcess('postgres');
  try {
    await traceWorkload(nullServer.url, 'x', 50, 'warmup');
    await traceWorkload(berth.url, berth.apiKey, 50, 'warmup');
    let ceilingRate = 0;
    let rate = 0;
    for (let trial = 0; trial < E2E_TRIALS; trial++) {
      // Alternating, so that both sides see the same neighbours.
      const ceiling = await traceWorkload(nullServer.url, 'x', E2E_TRACES, 'null');
      ceilingRate = Math.max(ceilingRate, ceiling.runs / ceiling.seconds);
      const actual = await traceWorkload(berth.url, berth.apiKey, E2E_TRACES, `e2e-${trial}`);
      rate = Math.max(rate, actual.runs / actual.seconds);
      const stored = await withPg(async (client) => Number((await client.query(`SELECT count(*) FROM ${berth.schema}.runs r JOIN ${berth.schema}.tracer_sessions s ON s.id = r.session_id WHERE s.name = $1`, [`e2e-${trial}`])).rows[0].count));
      if (stored !== actual.runs) throw new Error(`end to end: expected ${actual.runs} runs stored, found ${stored}`);
    }
    return { runs_per_s: Math.round(rate), null_server_runs_per_s: Math.round(ceilingRate), ratio: Number((rate / ceilingRate).toFixed(3)), runs_per_trial: E2E_TRACES * 4 };
  } finally {
    await nullServer.close();
    await berth.stop();
  }
}

// End to end first: the server-side phases leave PostgreSQL busy for a while after them (autovacuum and
// checkpoints of the rows they wrote), which would slow the Berth side of this comparison, not the SDK's.
const e2e = await endToEnd();
const capture = await startNullServer(true);
await traceWorkload(capture.url, 'x', TRACES, 'bench');
await capture.close();
const bodies = capture.captured;
const runs = capturedRows(bodies);
const postgres = await serverSide('postgres', bodies, runs);
const pglite = await serverSide('pglite', bodies, runs);
console.log(JSON.stringify({
  bench: 'ingest',
  captured: { bodies: bodies.length, runs: runs.size, bytes: bodies.reduce((sum, item) => sum + item.body.length, 0) },
  connections: CONNECTIONS,
  trials: TRIALS,
  e2e_trials: E2E_TRIALS,
  server_postgres: { ...postgres, target_runs_per_s: 5000, target_ratio: 0.3 },
  server_pglite: { ...pglite, target_ratio: 0.3 },
  end_to_end: { ...e2e, target_ratio: 0.8 },
}));
