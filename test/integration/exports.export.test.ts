// One-off exports end to end: runs put in the trace store, an export per format version, Parquet read back with
// DuckDB (rows, columns, types, layout), an export_fields subset with a filter, create-time validation, isolation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, startTestBerth, type TestBerth } from '../helpers/berth.ts';
import { destinationBody, FAST_EXPORT_ENV, ingestRuns, readParquet, startExportS3 } from '../helpers/exports.ts';
import type { TestS3 } from '../helpers/s3/index.ts';

let server: TestBerth;
let s3: TestS3;
let destinationId: string;
let sessionId: string;
const RUNS = 1500;
// Run i starts at 2026-03-01T20:00Z + i·3 min: 1500 runs over ~3.1 days.
const FROM = '2026-03-01T20:00:00Z';

before(async () => {
  [server, s3] = await Promise.all([
    startTestBerth({ env: { ...FAST_EXPORT_ENV, BERTH_EXPORT_ROWS_PER_FILE: '400', BERTH_EXPORT_ROW_GROUP_ROWS: '150', BERTH_EXPORT_SCAN_PAGE_SIZE: '100' } }),
    startExportS3(),
  ]);
  const destination = await server.api('POST', '/api/v1/bulk-exports/destinations', { body: destinationBody(s3, { prefix: 'lake' }) });
  assert.equal(destination.status, 201);
  destinationId = destination.body.id;
  // Through the trace store's own ingestion, as the langsmith SDK's batch transport sends them.
  sessionId = await ingestRuns(server.api, 'export-me', { from: FROM, count: RUNS, stepMs: 180_000 });
});
after(async () => {
  await server.close();
  await s3.stop();
});

async function expectedIds(start: string, end: string, extra = ''): Promise<string[]> {
  const rows = await server.berth.db.query<{ id: string }>(
    `SELECT id::text AS id FROM runs WHERE tenant_id = $1 AND session_id = $2 AND start_time >= $3 AND start_time < $4 ${extra} ORDER BY id`,
    [server.workspaceId, sessionId, start, end],
  );
  return rows.map((row) => row.id);
}

async function waitForStatus(id: string, status: string): Promise<any> {
  return eventually(async () => {
    const response = await server.api('GET', `/api/v1/bulk-exports/${id}`);
    if (['FAILED', 'CANCELLED', 'TIMEDOUT'].includes(response.body.status) && response.body.status !== status) {
      throw new Error(`export ended ${response.body.status}: ${JSON.stringify((await server.api('GET', `/api/v1/bulk-exports/${id}/runs`)).body)}`);
    }
    return response.body.status === status ? response.body : undefined;
  }, 60_000, `export ${status}`);
}

describe('a multi-day export', () => {
  test('default format: every row once, one run per UTC day, files of at most N rows, v1 column types', async () => {
    const start = '2026-03-01T22:00:00Z';
    const end = '2026-03-04T01:30:00Z';
    const created = await server.api('POST', '/api/v1/bulk-exports', {
      body: { bulk_export_destination_id: destinationId, session_id: sessionId, start_time: start, end_time: end },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.format_version, 'v1');
    assert.equal(created.body.compression, 'zstd');
    assert.equal(created.body.format, 'Parquet');
    const done = await waitForStatus(created.body.id, 'COMPLETED');
    assert.ok(done.finished_at);

    const runs = (await server.api('GET', `/api/v1/bulk-exports/${created.body.id}/runs`)).body;
    assert.deepEqual(runs.map((run: any) => [run.start_time, run.end_time, run.status]), [
      ['2026-03-01T22:00:00.000000+00:00', '2026-03-02T00:00:00.000000+00:00', 'COMPLETED'],
      ['2026-03-02T00:00:00.000000+00:00', '2026-03-03T00:00:00.000000+00:00', 'COMPLETED'],
      ['2026-03-03T00:00:00.000000+00:00', '2026-03-04T00:00:00.000000+00:00', 'COMPLETED'],
      ['2026-03-04T00:00:00.000000+00:00', '2026-03-04T01:30:00.000000+00:00', 'COMPLETED'],
    ]);
    const ids = await expectedIds(start, end);
    const rowsWritten = runs.reduce((sum: number, run: any) => sum + run.metadata.result.rows_written, 0);
    assert.equal(rowsWritten, ids.length);
    assert.equal(done.progress.rows_written, ids.length);
    assert.equal(done.progress.runs_completed, 4);

    const root = `lake/export_id=${created.body.id}/tenant_id=${server.workspaceId}/session_id=${sessionId}/runs`;
    const day2 = runs[1];
    assert.equal(day2.metadata.prefix, `${root}/year=2026/month=03/day=02`);
    assert.equal(day2.metadata.result.exported_files.length, Math.ceil(day2.metadata.result.rows_written / 400));
    assert.equal(day2.metadata.result.exported_files[0], `${root}/year=2026/month=03/day=02/${day2.id}-00000.parquet`);
    assert.ok(day2.metadata.result.latest_cursor);
    assert.deepEqual(day2.errors, {});
    const one = await server.api('GET', `/api/v1/bulk-exports/${created.body.id}/runs/${day2.id}`);
    assert.equal(one.status, 200);
    assert.deepEqual(one.body, day2);
    assert.equal((await server.api('GET', `/api/v1/bulk-exports/${created.body.id}/runs/00000000-0000-4000-8000-000000000000`)).status, 404);

    const { rows, types, files } = await readParquet(s3, 'exports', `lake/export_id=${created.body.id}/`);
    assert.equal(files.length, runs.reduce((sum: number, run: any) => sum + run.metadata.result.exported_files.length, 0));
    assert.ok(files.every((key) => key.startsWith(`${root}/year=2026/month=03/day=0`)));
    assert.deepEqual(rows.map((row) => row.id).sort(), ids, 'every selected row exactly once');
    assert.equal(Object.keys(types).length, 29);
    assert.equal(types.start_time, 'TIMESTAMP');
    assert.equal(types.first_token_time, 'TIMESTAMP');
    assert.equal(types.tags, 'VARCHAR');
    assert.equal(types.parent_run_ids, 'VARCHAR');
    assert.equal(types.inputs, 'VARCHAR');
    assert.equal(types.is_root, 'BOOLEAN');
    assert.equal(types.total_tokens, 'BIGINT');
    assert.equal(types.total_cost, 'DOUBLE');

    const run49 = rows.find((row) => row.name === 'run-49')!;
    assert.equal(run49.start_time, '2026-03-01 22:27:00');
    assert.equal(run49.end_time, '2026-03-01 22:27:01');
    assert.equal(run49.first_token_time, null);
    assert.equal(run49.tenant_id, server.workspaceId);
    assert.equal(run49.session_id, sessionId);
    assert.equal(run49.is_root, false);
    assert.equal(run49.error, 'boom 49');
    assert.equal(run49.run_type, 'llm');
    assert.deepEqual(JSON.parse(run49.tags), ['odd', 'x']);
    assert.deepEqual(JSON.parse(run49.inputs), { question: 'q49', n: 49, nested: { list: [49, 'x'] } });
    assert.deepEqual(JSON.parse(run49.extra).metadata.i, 49);
    assert.equal(Number(run49.total_tokens), 490);
    assert.equal(Number(run49.prompt_tokens), 294);
    assert.equal(run49.total_cost, 0.049);
    assert.equal(run49.prompt_cost, null);
    assert.equal(run49.dotted_order.split('.').length, 2);
    assert.equal(run49.trace_id, run49.parent_run_id);
    assert.deepEqual(JSON.parse(run49.parent_run_ids), [run49.parent_run_id]);
    const run48 = rows.find((row) => row.name === 'run-48')!;
    assert.equal(run48.is_root, true);
    assert.equal(run48.parent_run_id, null);
    assert.equal(run48.outputs, '{"answer":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}');
  });

  test('v2_beta with an export_fields subset and a filter: only those columns, only matching rows, enhanced types', async () => {
    const start = '2026-03-02T00:00:00Z';
    const end = '2026-03-03T12:00:00Z';
    const fields = ['id', 'name', 'run_type', 'start_time', 'tags', 'parent_run_ids', 'inputs', 'feedback_stats', 'is_root', 'tenant_id'];
    const created = await server.api('POST', '/api/v1/bulk-exports', {
      body: {
        bulk_export_destination_id: destinationId, session_id: sessionId, start_time: start, end_time: end,
        format_version: 'v2_beta', export_fields: fields, filter: 'eq(run_type, "llm")', compression: 'snappy',
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await waitForStatus(created.body.id, 'COMPLETED');
    const root = `lake/export_id=${created.body.id}/tenant_id=${server.workspaceId}/session_id=${sessionId}/resource=runs`;
    const { rows, types, files } = await readParquet(s3, 'exports', `lake/export_id=${created.body.id}/`);
    assert.ok(files.length > 0 && files.every((key) => key.startsWith(`${root}/year=2026/month=03/day=0`)), files.join('\n'));
    assert.deepEqual(Object.keys(types), fields);
    assert.equal(types.start_time, 'TIMESTAMP WITH TIME ZONE');
    assert.equal(types.tags, 'VARCHAR[]');
    assert.equal(types.parent_run_ids, 'VARCHAR[]');
    assert.equal(types.inputs, 'JSON');
    assert.equal(types.is_root, 'BOOLEAN');
    const ids = await expectedIds(start, end, `AND run_type = 'llm'`);
    assert.ok(ids.length > 100);
    assert.deepEqual(rows.map((row) => row.id).sort(), ids);
    assert.ok(rows.every((row) => row.run_type === 'llm'));
    const run7 = rows.find((row) => row.name === 'run-481')!;
    assert.deepEqual(run7.tags, ['odd', 'x']);
    assert.equal(run7.parent_run_ids.length, 1);
    assert.equal(run7.start_time, '2026-03-02 20:03:00+00');
  });
});

describe('create-time validation', () => {
  const base = () => ({ bulk_export_destination_id: destinationId, session_id: sessionId, start_time: '2026-03-02T00:00:00Z', end_time: '2026-03-03T00:00:00Z' });

  test('one-off exports need end_time after start_time', async () => {
    const missing = await server.api('POST', '/api/v1/bulk-exports', { body: { ...base(), end_time: undefined } });
    assert.equal(missing.status, 422);
    assert.deepEqual(missing.body.detail.map((item: any) => [item.type, item.loc]), [['missing', ['body', 'end_time']]]);
    const backwards = await server.api('POST', '/api/v1/bulk-exports', { body: { ...base(), end_time: '2026-03-01T00:00:00Z' } });
    assert.equal(backwards.status, 422);
    assert.deepEqual(backwards.body.detail[0].loc, ['body', 'end_time']);
    assert.match(backwards.body.detail[0].msg, /after start_time/);
    const equal = await server.api('POST', '/api/v1/bulk-exports', { body: { ...base(), end_time: base().start_time } });
    assert.equal(equal.status, 422);
  });

  test('scheduled exports forbid end_time; interval_hours is 1 to 168', async () => {
    const withEnd = await server.api('POST', '/api/v1/bulk-exports', { body: { ...base(), interval_hours: 6 } });
    assert.equal(withEnd.status, 422);
    assert.match(withEnd.body.detail[0].msg, /omitted for scheduled/);
    for (const interval of [0, 169]) {
      const response = await server.api('POST', '/api/v1/bulk-exports', { body: { ...base(), end_time: undefined, interval_hours: interval } });
      assert.equal(response.status, 422);
      assert.deepEqual(response.body.detail[0].loc, ['body', 'interval_hours']);
    }
  });

  test('unknown export_fields, format_version and several bad fields are listed together', async () => {
    const response = await server.api('POST', '/api/v1/bulk-exports', {
      body: { ...base(), export_fields: ['id', 'latency'], format_version: 'v3', session_id: 'nope' },
    });
    assert.equal(response.status, 422);
    const locs = response.body.detail.map((item: any) => item.loc.join('.'));
    assert.ok(locs.includes('body.export_fields.1'), locs.join(', '));
    assert.ok(locs.includes('body.format_version'), locs.join(', '));
    assert.ok(locs.includes('body.session_id'), locs.join(', '));
  });

  test('a filter that does not parse is a 400 naming the position', async () => {
    const response = await server.api('POST', '/api/v1/bulk-exports', { body: { ...base(), filter: 'eq(run_type, "llm"' } });
    assert.equal(response.status, 400);
    assert.match(response.body.detail, /position \d+/);
  });

  test('destination and project must exist in the caller workspace', async () => {
    const noDestination = await server.api('POST', '/api/v1/bulk-exports', { body: { ...base(), bulk_export_destination_id: '00000000-0000-4000-8000-000000000000' } });
    assert.equal(noDestination.status, 404);
    const noProject = await server.api('POST', '/api/v1/bulk-exports', { body: { ...base(), session_id: '00000000-0000-4000-8000-000000000000' } });
    assert.equal(noProject.status, 404);
    const workspace = await server.api('POST', '/api/v1/workspaces', { body: { name: 'other-ws' } });
    const headers = { 'x-tenant-id': workspace.body.id };
    const foreign = await server.api('POST', '/api/v1/bulk-exports', { headers, body: base() });
    assert.equal(foreign.status, 404, 'another workspace cannot use this destination');
    const list = await server.api('GET', '/api/v1/bulk-exports', { headers });
    assert.deepEqual(list.body, []);
    const mine = (await server.api('GET', '/api/v1/bulk-exports')).body;
    assert.ok(mine.length > 0);
    assert.equal((await server.api('GET', `/api/v1/bulk-exports/${mine[0].id}`, { headers })).status, 404);
    assert.equal((await server.api('GET', `/api/v1/bulk-exports/${mine[0].id}/runs`, { headers })).status, 404);
    assert.equal((await server.api('PATCH', `/api/v1/bulk-exports/${mine[0].id}`, { headers, body: { status: 'Cancelled' } })).status, 404);
  });

  test('PATCH accepts only Cancelled; a finished export cannot be cancelled', async () => {
    const mine = (await server.api('GET', '/api/v1/bulk-exports')).body;
    const completed = mine.find((item: any) => item.status === 'COMPLETED');
    const bad = await server.api('PATCH', `/api/v1/bulk-exports/${completed.id}`, { body: { status: 'Running' } });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.detail[0].loc, ['body', 'status']);
    const late = await server.api('PATCH', `/api/v1/bulk-exports/${completed.id}`, { body: { status: 'cancelled' } });
    assert.equal(late.status, 409);
  });
});
