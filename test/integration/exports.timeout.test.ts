// The run timeout: an attempt that runs past it is stopped, recorded as errors.retry_<n> and retried; when the
// retries run out the export fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, startTestBerth } from '../helpers/berth.ts';
import { createProject, destinationBody, FAST_EXPORT_ENV, seedRuns, startExportS3 } from '../helpers/exports.ts';
import type { RunSource } from '../../src/modules/exports/index.ts';

test('a run past its time limit is retried, then fails the export', async () => {
  let release: () => void = () => {};
  const stuck = new Promise<void>((resolve) => {
    release = resolve;
  });
  // Every read hangs: each attempt can only end by the timeout.
  const hang = (source: RunSource): RunSource => ({
    async scan(request) {
      await stuck;
      return source.scan(request);
    },
  });
  const s3 = await startExportS3();
  const server = await startTestBerth({
    env: { ...FAST_EXPORT_ENV, BERTH_EXPORT_RUN_TIMEOUT_SECONDS: '1', BERTH_EXPORT_RETRY_LIMIT: '1' },
    startOptions: { wrapExportRunSource: hang },
  });
  try {
    const destination = await server.api('POST', '/api/v1/bulk-exports/destinations', { body: destinationBody(s3) });
    const sessionId = await createProject(server.api);
    await seedRuns(server.berth.db, { tenantId: server.workspaceId, sessionId, from: '2026-10-01T00:00:00Z', count: 10, stepMs: 60_000 });
    const created = await server.api('POST', '/api/v1/bulk-exports', {
      body: { bulk_export_destination_id: destination.body.id, session_id: sessionId, start_time: '2026-10-01T00:00:00Z', end_time: '2026-10-02T00:00:00Z' },
    });
    const failed = await eventually(async () => {
      const body = (await server.api('GET', `/api/v1/bulk-exports/${created.body.id}`)).body;
      return body.status === 'FAILED' ? body : undefined;
    }, 30_000, 'the export to fail');
    assert.ok(failed.finished_at);
    const [run] = (await server.api('GET', `/api/v1/bulk-exports/${created.body.id}/runs`)).body;
    assert.equal(run.status, 'FAILED');
    assert.equal(run.retry_number, 1);
    assert.deepEqual(run.errors, {
      retry_0: 'The run exceeded its time limit of 1 s.',
      retry_1: 'The run exceeded its time limit of 1 s.',
    });
  } finally {
    release();
    await server.close();
    await s3.stop();
  }
});
