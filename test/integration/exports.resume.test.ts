// A worker killed with SIGKILL in the middle of a run: the next process detects it by its lapsed lease, requeues
// the run with an attempt counted, aborts the dangling multipart upload and resumes from the checkpoint; the
// export's files hold every selected row exactly once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { eventually, startTestBerth, testEnv } from '../helpers/berth.ts';
import { createProject, destinationBody, FAST_EXPORT_ENV, readParquet, seedRuns, startExportS3 } from '../helpers/exports.ts';

const ENV = { ...FAST_EXPORT_ENV, BERTH_EXPORT_ROWS_PER_FILE: '100', BERTH_EXPORT_ROW_GROUP_ROWS: '50', BERTH_EXPORT_SCAN_PAGE_SIZE: '25', BERTH_EXPORT_WORKER_CONCURRENCY: '1' };
const INTERRUPTED = 'The worker running this run stopped responding (lease expired); resumed from the last checkpoint.';

test('SIGKILL mid-run, restart: resumed from the checkpoint, every row exactly once', async () => {
  const s3 = await startExportS3();
  // Set up with an API-only server (no workers), then hand the database over to a worker process.
  const setup = await startTestBerth({ env: { ...ENV, BERTH_ROLE: 'api' } });
  const { dataDir, schema, apiKey, workspaceId } = setup;
  let exportId: string;
  try {
    const destination = await setup.api('POST', '/api/v1/bulk-exports/destinations', { body: destinationBody(s3, { prefix: 'resume' }) });
    assert.equal(destination.status, 201);
    const sessionId = await createProject(setup.api);
    await seedRuns(setup.berth.db, { tenantId: workspaceId, sessionId, from: '2026-06-01T00:00:00Z', count: 500, stepMs: 60_000 });
    const created = await setup.api('POST', '/api/v1/bulk-exports', {
      body: { bulk_export_destination_id: destination.body.id, session_id: sessionId, start_time: '2026-06-01T00:00:00Z', end_time: '2026-06-02T00:00:00Z' },
    });
    assert.equal(created.status, 201);
    exportId = created.body.id;
  } finally {
    await setup.close({ keepData: true });
  }

  const child = spawn(process.execPath, ['test/integration/exports.fixtures/worker-child.ts'], {
    env: { ...process.env, ...testEnv({ dataDir, schema, apiKey, env: { ...ENV, MIDWAY_AFTER_SCANS: '7' } }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => {
    output += String(chunk);
  });
  await eventually(async () => (output.includes('MIDWAY') ? true : undefined), 60_000, 'the worker to be midway');
  child.kill('SIGKILL');
  await once(child, 'exit');
  // Killed after 7 pages of 25 rows: one 100-row file committed, the second one open.
  const createdBeforeKill = s3.requests.filter((request) => request.method === 'POST' && request.query.uploads !== undefined && request.status === 200);
  assert.ok(createdBeforeKill.length >= 2, 'a second file was open when the worker died');
  const dangling = createdBeforeKill.at(-1)!;

  const restarted = await startTestBerth({ env: ENV, dataDir, schema, apiKey });
  try {
    const done = await eventually(async () => {
      const response = await restarted.api('GET', `/api/v1/bulk-exports/${exportId}`);
      if (response.body.status === 'FAILED') throw new Error('export failed');
      return response.body.status === 'COMPLETED' ? response.body : undefined;
    }, 60_000, 'the export to complete after the restart');
    assert.equal(done.progress.rows_written, 500);
    const [run] = (await restarted.api('GET', `/api/v1/bulk-exports/${exportId}/runs`)).body;
    assert.equal(run.retry_number, 1);
    assert.deepEqual(run.errors, { retry_0: INTERRUPTED });
    assert.equal(run.metadata.result.exported_files.length, 5);

    const aborts = s3.requests.filter((request) => request.method === 'DELETE' && request.query.uploadId !== undefined);
    assert.ok(aborts.some((request) => request.key === dangling.key), 'the dangling multipart upload was aborted');
    // Files committed before the kill were not written again.
    const firstFile = run.metadata.result.exported_files[0];
    const completions = s3.requests.filter((request) => request.method === 'POST' && request.query.uploadId !== undefined && request.key === firstFile);
    assert.equal(completions.length, 1);

    const { rows } = await readParquet(s3, 'exports', `resume/export_id=${exportId}/`, 'id');
    assert.equal(rows.length, 500);
    assert.equal(new Set(rows.map((row) => row.id)).size, 500, 'no duplicate ids');
  } finally {
    await restarted.close();
    await s3.stop();
  }
});
