// Agent server benchmark: Berth (`berth agent-server`, durable storage) against the official JS server
// (@langchain/langgraph-api, in-memory) with the same one-node graph on this machine, plus the physical
// limit: the graph invoked in-process with Berth's checkpointer on the same storage, measured interleaved
// with Berth's runs (and, on PostgreSQL, LangGraph's own PostgresSaver for comparison). Prints one JSON line.
//   npx node bench/agents.ts        [BENCH_RUNS=200 BENCH_SECONDS=20 BENCH_CONCURRENCY=10]
//   BENCH_DATABASE_URL=postgres://… also measures Berth on PostgreSQL; BENCH_SKIP_OFFICIAL=1 skips the official server.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@langchain/langgraph-sdk';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import pg from 'pg';
import { openDb, migrate } from '../src/platform/db/index.ts';
import { DbCheckpointSaver } from '../src/modules/agents/checkpointer.ts';
import { builder } from './agents/graph.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);
const databaseUrl = process.env.BENCH_DATABASE_URL;
const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, '..', 'src', 'cli.ts');
const input = { messages: [{ role: 'user', content: 'hi' }] };

const ms = (ns: bigint) => Number(ns) / 1e6;
function stats(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(2));
  return { n: sorted.length, p50_ms: at(0.5), p95_ms: at(0.95), p99_ms: at(0.99), max_ms: Number(sorted.at(-1)!.toFixed(2)) };
}
async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return ms(process.hrtime.bigint() - start);
}
function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : NaN;
}
function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : NaN;
}
async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
function waitFor(child: ChildProcess, pattern: RegExp): Promise<string> {
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      const match = pattern.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk) => { output += chunk; });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}:\n${output.slice(-3000)}`)));
  });
}

/** The same graph invoked in this process, for the physical limit (see inProcess). */
interface InProcessGraph {
  name: string;
  invoke(threadId: string): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Measures a server; `limits` are invoked in turn with each `runs.wait` on the one thread (one call each,
 * same step of thread growth), so that the machine's noise, which moves single runs by milliseconds here,
 * hits the server and its limits alike.
 */
async function measureServer(client: Client, pid: number, limits: InProcessGraph[] = []) {
  await client.runs.wait(null, 'agent', { input }); // warm-up, as in the reference measurement
  const rssAfterStart = rssMb(pid);
  const createLatencies: number[] = [];
  for (let i = 0; i < RUNS; i++) createLatencies.push(await timed(() => client.threads.create()));
  const thread = await client.threads.create();
  const limitThreads = limits.map(() => crypto.randomUUID());
  for (const limit of limits) await limit.invoke(crypto.randomUUID()); // warm-up
  const waitLatencies: number[] = [];
  const limitLatencies = limits.map((): number[] => []);
  for (let i = 0; i < RUNS; i++) {
    waitLatencies.push(await timed(() => client.runs.wait(thread.thread_id, 'agent', { input })));
    for (const [k, limit] of limits.entries()) limitLatencies[k]!.push(await timed(() => limit.invoke(limitThreads[k]!)));
  }
  const end = Date.now() + SECONDS * 1000;
  const statelessLatencies: number[] = [];
  let errors = 0;
  const started = Date.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (Date.now() < end) {
      try {
        statelessLatencies.push(await timed(() => client.runs.wait(null, 'agent', { input })));
      } catch {
        errors++;
      }
    }
  }));
  const elapsed = (Date.now() - started) / 1000;
  return {
    server: {
      threads_create: stats(createLatencies),
      runs_wait_one_thread: stats(waitLatencies),
      stateless_wait: { concurrency: CONCURRENCY, seconds: Number(elapsed.toFixed(1)), runs: statelessLatencies.length, errors, runs_per_s: Number((statelessLatencies.length / elapsed).toFixed(1)), ...stats(statelessLatencies) },
      rss_mb_after_start: rssAfterStart,
      peak_rss_mb: peakRssMb(pid),
    },
    limits: Object.fromEntries(limits.map((limit, k) => [limit.name, { invoke_one_thread: stats(limitLatencies[k]!) }])),
  };
}

async function berth(engine: 'pglite' | 'postgres') {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'berth-bench-agents-'));
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const apiKey = `bench_${randomBytes(8).toString('hex')}`;
  const limits = [await inProcess(engine)];
  if (engine === 'postgres') limits.push(await inProcessOfficialSaver());
  const child = spawn(process.execPath, [CLI, 'agent-server', '--config', path.join(here, 'agents', 'langgraph.json')], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', BERTH_DATA_DIR: dataDir, BERTH_API_KEY: apiKey, LOG_LEVEL: 'warn',
      ...(engine === 'postgres' ? { DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema } : { DATABASE_URL: '' }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const url = await waitFor(child, /listening on (http:\/\/\S+)/);
    const { server, limits: measured } = await measureServer(new Client({ apiUrl: url, apiKey }), child.pid!, limits);
    return { server: { engine, ...server }, limits: measured };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    await rm(dataDir, { recursive: true, force: true });
    if (engine === 'postgres') await dropSchema(schema);
    for (const limit of limits) await limit.close();
  }
}

async function official() {
  const cwd = await mkdtemp(path.join(os.tmpdir(), 'langgraph-api-bench-'));
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(here, 'agents', 'official-server.ts'), String(port), cwd], {
    cwd, env: { ...process.env, LOG_LEVEL: 'error', LANGSMITH_TRACING: 'false' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const url = await waitFor(child, /READY (\S+)/);
    return (await measureServer(new Client({ apiUrl: url }), child.pid!)).server;
  } finally {
    child.kill('SIGKILL');
    await rm(cwd, { recursive: true, force: true });
  }
}

/** The physical limit: the same graph invoked in this process with Berth's checkpointer on the same storage. */
async function inProcess(engine: 'pglite' | 'postgres'): Promise<InProcessGraph> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'berth-bench-inproc-'));
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const db = await openDb({ databaseUrl: engine === 'postgres' ? databaseUrl : undefined, databaseSchema: schema, pgliteDir: path.join(dataDir, 'pgdata') });
  await migrate(db);
  return inProcessGraph(`in_process_${engine}`, new DbCheckpointSaver(db), async () => {
    await db.close();
    await rm(dataDir, { recursive: true, force: true });
    if (engine === 'postgres') await dropSchema(schema);
  });
}

/** For comparison: the same graph in-process with LangGraph's own PostgreSQL checkpointer (PostgresSaver). */
async function inProcessOfficialSaver(): Promise<InProcessGraph> {
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const saver = PostgresSaver.fromConnString(databaseUrl!, { schema });
  await saver.setup();
  return inProcessGraph('in_process_official_postgres_saver', saver, async () => {
    await saver.end();
    await dropSchema(schema);
  });
}

function inProcessGraph(name: string, checkpointer: BaseCheckpointSaver, close: () => Promise<void>): InProcessGraph {
  const graph = builder.compile({ checkpointer });
  return { name, invoke: (threadId) => graph.invoke(input as any, { configurable: { thread_id: threadId } }), close };
}

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => client.end());
}

const engines: ('pglite' | 'postgres')[] = databaseUrl ? ['pglite', 'postgres'] : ['pglite'];
const result: Record<string, unknown> = { bench: 'agents', runs: RUNS, node: process.version, cpus: os.cpus().length };
for (const engine of engines) {
  const { server, limits } = await berth(engine);
  result[`berth_${engine}`] = server;
  Object.assign(result, limits);
}
if (!process.env.BENCH_SKIP_OFFICIAL) result.official_js_server = await official();
const officialWait = (result.official_js_server as any)?.runs_wait_one_thread?.p50_ms;
const officialThroughput = (result.official_js_server as any)?.stateless_wait?.runs_per_s;
result.targets = Object.fromEntries(engines.map((engine) => {
  const b = result[`berth_${engine}`] as any;
  const limit = (result[`in_process_${engine}`] as any).invoke_one_thread.p50_ms;
  return [engine, {
    wait_p50_vs_official: officialWait ? Number((officialWait / b.runs_wait_one_thread.p50_ms).toFixed(1)) : null,
    throughput_vs_official: officialThroughput ? Number((b.stateless_wait.runs_per_s / officialThroughput).toFixed(1)) : null,
    wait_p50_over_in_process_ms: Number((b.runs_wait_one_thread.p50_ms - limit).toFixed(2)),
  }];
}));
process.stdout.write(`${JSON.stringify(result)}\n`);
