// Concurrency limits (runs per export, exports per workspace, FIFO), workspaces limited independently, and the
// workflow timeout (TIMEDOUT, not retried), with small limits and a controllable clock.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, startTestBerth, type TestBerth } from '../helpers/berth.ts';
import { createProject, destinationBody, FAST_EXPORT_ENV, seedRuns, startExportS3 } from '../helpers/exports.ts';
import type { TestS3 } from '../helpers/s3/index.ts';
import type { RunSource } from '../../src/modules/exports/index.ts';

let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };

// Reads wait at the gate while it is closed; the order of first reads per partition is recorded.
let release: () => void = () => {};
let gate: Promise<void> = Promise.resolve();
const firstReads: string[] = [];
function closeGate() {
  gate = new Promise((resolve) => {
    release = resolve;
  });
}
const wrap = (source: RunSource): RunSource => ({
  async scan(request) {
    const key = `${request.sessionId}/${request.startTime}`;
    if (!firstReads.includes(key)) firstReads.push(key);
    await gate;
    return source.scan(request);
  },
});

let server: TestBerth;
let s3: TestS3;

before(async () => {
  [server, s3] = await Promise.all([
    startTestBerth({
      env: { ...FAST_EXPORT_ENV, BERTH_EXPORT_WORKER_CONCURRENCY: '6', BULK_EXPORT_MAX_CONCURRENT_RUNS: '2', DATA_EXPORT_RUN_LIMIT: '1', BERTH_EXPORT_WORKFLOW_TIMEOUT_SECONDS: '3600' },
      startOptions: { exportClock: clock, wrapExportRunSource: wrap },
    }),
    startExportS3(),
  ]);
});
after(async () => {
  release();
  await server.close();
  await s3.stop();
});

async function setupWorkspace(headers: Record<string, string>): Promise<{ destinationId: string; sessionId: string; tenantId: string }> {
  const destination = await server.api('POST', '/api/v1/bulk-exports/destinations', { headers, body: destinationBody(s3, { prefix: 'limits' }) });
  assert.equal(destination.status, 201);
  const tenantId = destination.body.tenant_id;
  const sessionId = await createProject(server.api, headers);
  await seedRuns(server.berth.db, { tenantId, sessionId, from: '2026-08-01T00:00:00Z', count: 100, stepMs: 3_600_000 });
  return { destinationId: destination.body.id, sessionId, tenantId };
}

async function createExport(headers: Record<string, string>, ws: { destinationId: string; sessionId: string }, start: string, end: string): Promise<string> {
  const response = await server.api('POST', '/api/v1/bulk-exports', { headers, body: { bulk_export_destination_id: ws.destinationId, session_id: ws.sessionId, start_time: start, end_time: end } });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body.id;
}

async function leasedRuns(): Promise<Map<string, number>> {
  const rows = await server.berth.db.query<{ bulk_export_id: string; n: number }>(
    `SELECT bulk_export_id, count(*)::int AS n FROM bulk_export_runs WHERE lease_owner IS NOT NULL AND status = 'RUNNING' GROUP BY bulk_export_id`);
  return new Map(rows.map((row) => [row.bulk_export_id, row.n]));
}

test('at most N runs per export and M exports per workspace run at once; the rest queue in FIFO order', async () => {
  const other = await server.api('POST', '/api/v1/workspaces', { body: { name: 'limits-other' } });
  const mine = await setupWorkspace({});
  const theirs = await setupWorkspace({ 'x-tenant-id': other.body.id });
  closeGate();
  const a = await createExport({}, mine, '2026-08-01T00:00:00Z', '2026-08-04T00:00:00Z');
  const b = await createExport({}, mine, '2026-08-04T00:00:00Z', '2026-08-05T00:00:00Z');
  const c = await createExport({ 'x-tenant-id': other.body.id }, theirs, '2026-08-01T00:00:00Z', '2026-08-04T00:00:00Z');
  await eventually(async () => {
    const leased = await leasedRuns();
    return leased.get(a) === 2 && leased.get(c) === 2 ? true : undefined;
  }, 20_000, 'A and C to run 2 runs each');
  // Two of the six worker slots stay idle and keep polling: neither limit lets them take more.
  await sleep(500);
  const leased = await leasedRuns();
  assert.equal(leased.get(a), 2, 'per-export limit');
  assert.equal(leased.get(b), undefined, 'per-workspace limit: B waits for A');
  assert.equal(leased.get(c), 2, 'another workspace is limited on its own');
  assert.equal((await server.api('GET', `/api/v1/bulk-exports/${b}`)).body.status, 'CREATED');

  release();
  for (const id of [a, b]) {
    await eventually(async () => ((await server.api('GET', `/api/v1/bulk-exports/${id}`)).body.status === 'COMPLETED' ? true : undefined), 30_000, `export ${id}`);
  }
  await eventually(async () => ((await server.api('GET', `/api/v1/bulk-exports/${c}`, { headers: { 'x-tenant-id': other.body.id } })).body.status === 'COMPLETED' ? true : undefined), 30_000, 'export C');
  // FIFO: B's only run was read after every run of A had started.
  const mineReads = firstReads.filter((key) => key.startsWith(mine.sessionId));
  assert.deepEqual(mineReads.map((key) => key.split('/')[1]!.slice(0, 10)), ['2026-08-01', '2026-08-02', '2026-08-03', '2026-08-04']);
});

test('an export past the workflow timeout becomes TIMEDOUT and is not retried', async () => {
  const ws = await setupWorkspace({});
  closeGate();
  const id = await createExport({}, ws, '2026-08-01T00:00:00Z', '2026-08-02T00:00:00Z');
  await eventually(async () => ((await leasedRuns()).get(id) === 1 ? true : undefined), 20_000, 'the run to start');
  offsetMs += 2 * 3600 * 1000;
  const done = await eventually(async () => {
    const body = (await server.api('GET', `/api/v1/bulk-exports/${id}`)).body;
    return body.status === 'TIMEDOUT' ? body : undefined;
  }, 20_000, 'TIMEDOUT');
  assert.ok(done.finished_at);
  release();
  await sleep(300);
  const runs = (await server.api('GET', `/api/v1/bulk-exports/${id}/runs`)).body;
  assert.deepEqual(runs.map((run: any) => run.status), ['TIMEDOUT']);
  assert.equal((await server.api('GET', `/api/v1/bulk-exports/${id}`)).body.status, 'TIMEDOUT');
});
