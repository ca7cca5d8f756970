// Scheduled exports with a controllable clock: windows spawned only once they end, started 10 minutes later,
// never twice (concurrent schedulers, restarts), and cancelling the schedule leaves spawned exports running.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, startTestBerth, type TestBerth } from '../helpers/berth.ts';
import { createProject, destinationBody, FAST_EXPORT_ENV, readParquet, seedRuns, startExportS3 } from '../helpers/exports.ts';
import type { TestS3 } from '../helpers/s3/index.ts';

let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };
const setNow = (iso: string) => {
  offsetMs = Date.parse(iso) - Date.now();
};

let server: TestBerth;
let s3: TestS3;
let destinationId: string;
let sessionId: string;

before(async () => {
  setNow('2026-07-01T00:30:00Z');
  [server, s3] = await Promise.all([startTestBerth({ env: FAST_EXPORT_ENV, startOptions: { exportClock: clock } }), startExportS3()]);
  const destination = await server.api('POST', '/api/v1/bulk-exports/destinations', { body: destinationBody(s3, { prefix: 'sched' }) });
  destinationId = destination.body.id;
  sessionId = await createProject(server.api);
  // A run every 5 minutes from 00:00 to 05:55.
  await seedRuns(server.berth.db, { tenantId: server.workspaceId, sessionId, from: '2026-07-01T00:00:00Z', count: 72, stepMs: 300_000 });
});
after(async () => {
  await server?.close();
  await s3.stop();
});

async function children(parentId: string): Promise<any[]> {
  const all = (await server.api('GET', '/api/v1/bulk-exports')).body as any[];
  return all.filter((item) => item.source_bulk_export_id === parentId).sort((a, b) => a.start_time.localeCompare(b.start_time));
}

test('a scheduled export spawns one export per ended window, each started 10 minutes after its end', async () => {
  const created = await server.api('POST', '/api/v1/bulk-exports', {
    body: { bulk_export_destination_id: destinationId, session_id: sessionId, start_time: '2026-07-01T00:00:00Z', interval_hours: 1, format_version: 'v2_beta' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const parent = created.body;
  assert.equal(parent.status, 'RUNNING');
  assert.equal(parent.end_time, null);
  assert.equal(parent.interval_hours, 1);
  assert.deepEqual(await children(parent.id), [], 'nothing before the first window ends');

  setNow('2026-07-01T01:05:00Z');
  const [first] = await eventually(async () => {
    const list = await children(parent.id);
    return list.length > 0 ? list : undefined;
  }, 20_000, 'the first window');
  assert.equal(first.start_time, '2026-07-01T00:00:00.000000+00:00');
  assert.equal(first.end_time, '2026-07-01T01:00:00.000000+00:00');
  assert.equal(first.format_version, 'v2_beta');
  assert.equal(first.status, 'CREATED', 'not started before end_time + 10 minutes');

  setNow('2026-07-01T01:11:00Z');
  await eventually(async () => ((await server.api('GET', `/api/v1/bulk-exports/${first.id}`)).body.status === 'COMPLETED' ? true : undefined), 30_000, 'the first window to be exported');
  const { rows } = await readParquet(s3, 'exports', `sched/export_id=${first.id}/`, 'name');
  assert.equal(rows.length, 12, 'the runs of 00:00–01:00');

  // Several schedulers at once (as several worker processes would) spawn each window once.
  setNow('2026-07-01T03:20:00Z');
  await Promise.all(Array.from({ length: 5 }, () => server.berth.exports.scheduler.tick(clock.now())));
  const afterTicks = await children(parent.id);
  assert.deepEqual(afterTicks.map((item) => item.start_time), [
    '2026-07-01T00:00:00.000000+00:00', '2026-07-01T01:00:00.000000+00:00', '2026-07-01T02:00:00.000000+00:00',
  ]);
  await eventually(async () => ((await children(parent.id)).every((item) => item.status === 'COMPLETED') ? true : undefined), 30_000, 'windows exported');

  // The schedule lives in the database: a restarted server carries on where it stopped.
  await server.close({ keepData: true });
  setNow('2026-07-01T04:30:00Z');
  server = await startTestBerth({ env: FAST_EXPORT_ENV, dataDir: server.dataDir, schema: server.schema, apiKey: server.apiKey, startOptions: { exportClock: clock } });
  const resumed = await eventually(async () => {
    const list = await children(parent.id);
    return list.length === 4 ? list : undefined;
  }, 20_000, 'the 03:00 window after the restart');
  assert.equal(resumed[3].start_time, '2026-07-01T03:00:00.000000+00:00');
  assert.equal(new Set(resumed.map((item) => item.start_time)).size, 4);

  // Cancelling the schedule stops spawning; the spawned export keeps going and completes.
  setNow('2026-07-01T05:05:00Z');
  const fifth = await eventually(async () => {
    const list = await children(parent.id);
    return list.length === 5 ? list[4] : undefined;
  }, 20_000, 'the 04:00 window');
  assert.equal(fifth.status, 'CREATED');
  const cancelled = await server.api('PATCH', `/api/v1/bulk-exports/${parent.id}`, { body: { status: 'Cancelled' } });
  assert.equal(cancelled.body.status, 'CANCELLED');
  setNow('2026-07-01T07:30:00Z');
  await eventually(async () => ((await server.api('GET', `/api/v1/bulk-exports/${fifth.id}`)).body.status === 'COMPLETED' ? true : undefined), 30_000, 'the spawned export to complete');
  await server.berth.exports.scheduler.tick(clock.now());
  assert.equal((await children(parent.id)).length, 5, 'no windows after the cancel');
});
