// List-revisions throughput and latency on a deployment with 10,000 revisions (limit 100, with and
// without a status filter), against a bare Fastify route answering the same JSON on the same machine.
// Storage: PGlite by default, PostgreSQL with BENCH_DATABASE_URL. Prints one JSON line.
//   npx node bench/controlplane.ts            [BENCH_SECONDS=5 BENCH_CONNECTIONS=8]
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import Fastify from 'fastify';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { startBerth } from '../src/main.ts';
import { RevisionsList } from '../src/modules/controlplane/schemas.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4);
const REVISIONS = Number(process.env.BENCH_REVISIONS ?? 10_000);
const databaseUrl = process.env.BENCH_DATABASE_URL;
const schema = `bench_${randomBytes(4).toString('hex')}`;

// The load generator runs on its own thread (the machine's other core) with keep-alive connections.
const LOAD_GENERATOR = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { url, headers, seconds, connections } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
const latencies = [];
let errors = 0;
const end = Date.now() + seconds * 1000;
function one() {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const req = http.get(url, { agent, headers }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode !== 200) errors++;
        latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
        resolve();
      });
    });
    req.on('error', () => { errors++; resolve(); });
  });
}
async function loop() { while (Date.now() < end) await one(); }
Promise.all(Array.from({ length: connections }, loop)).then(() => {
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  parentPort.postMessage({ requests: latencies.length, errors, rps: latencies.length / seconds, p50_ms: at(0.5), p99_ms: at(0.99) });
  agent.destroy();
});`;

interface LoadResult { requests: number; errors: number; rps: number; p50_ms: number; p99_ms: number }

function load(url: string, headers: Record<string, string>): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(LOAD_GENERATOR, { eval: true, workerData: { url, headers, seconds: SECONDS, connections: CONNECTIONS } });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

const round = (value: number) => Math.round(value * 100) / 100;

async function main() {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'berth-bench-'));
  const apiKey = `bench_${randomBytes(8).toString('hex')}`;
  const config = loadConfig({
    HOST: '127.0.0.1', PORT: '0', BERTH_DATA_DIR: dataDir, BERTH_API_KEY: apiKey, LOG_LEVEL: 'warn', BERTH_ROLE: 'api',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema } : {}),
  });
  const berth = await startBerth(config);
  const headers = { 'x-api-key': apiKey };
  try {
    const created = await fetch(`${berth.url}/v2/deployments`, {
      method: 'POST', headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench', source: 'external_container', source_config: {}, source_revision_config: { image_uri: 'bench:1' }, secrets: [] }),
    }).then((response) => response.json()) as { id: string; tenant_id: string };
    // 10,000 revisions with a realistic spread of final states, inserted in one statement.
    await berth.db.query(`
      INSERT INTO revisions (id, deployment_id, tenant_id, status, source, image_uri, remote_reconciled, created_at, updated_at)
      SELECT gen_random_uuid(), $1, $2,
             (ARRAY['DEPLOYED','SKIPPED','BUILD_FAILED','DEPLOY_FAILED','INTERRUPTED'])[1 + i % 5],
             'external_container', 'bench:' || i, i % 3 = 0, now() - (i || ' seconds')::interval, now()
      FROM generate_series(1, $3::int) AS i`, [created.id, created.tenant_id, REVISIONS - 1]);

    const listUrl = `${berth.url}/v2/deployments/${created.id}/revisions?limit=100`;
    const filteredUrl = `${listUrl}&status=DEPLOYED,BUILD_FAILED`;
    const sample = await fetch(listUrl, { headers }).then((response) => response.json());
    const filteredSample = await fetch(filteredUrl, { headers }).then((response) => response.json());

    // The ceiling: Fastify serializing the same page with the same response schema, no auth, no database.
    const bare = Fastify();
    bare.get('/list', { schema: { response: { 200: RevisionsList } } }, async () => sample);
    bare.get('/filtered', { schema: { response: { 200: RevisionsList } } }, async () => filteredSample);
    const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 });

    await load(listUrl, headers); // warm-up
    const berthList = await load(listUrl, headers);
    const berthFiltered = await load(filteredUrl, headers);
    const bareList = await load(`${bareUrl}/list`, {});
    const bareFiltered = await load(`${bareUrl}/filtered`, {});
    await bare.close();

    const report = (result: LoadResult) => ({ rps: round(result.rps), p50_ms: round(result.p50_ms), p99_ms: round(result.p99_ms), errors: result.errors });
    console.log(JSON.stringify({
      bench: 'controlplane.list_revisions',
      storage: berth.db.engine,
      revisions: REVISIONS,
      limit: 100,
      connections: CONNECTIONS,
      seconds: SECONDS,
      berth: { no_filter: report(berthList), status_filter: report(berthFiltered) },
      bare_fastify: { no_filter: report(bareList), status_filter: report(bareFiltered) },
      ratio_to_bare: { no_filter: round(berthList.rps / bareList.rps), status_filter: round(berthFiltered.rps / bareFiltered.rps) },
      targets: { p99_ms_below: 10, ratio_at_least: 0.5 },
    }));
  } finally {
    await berth.close();
    if (databaseUrl) {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; DROP SCHEMA IF EXISTS ${schema}_jobs CASCADE`);
      await client.end();
    }
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
