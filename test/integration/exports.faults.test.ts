// Failure handling of export runs: S3 faults and database errors are retried (errors.retry_<n>), a bucket deleted
// mid-export fails the export without retry, retries run out, and cancel stops work and aborts the open upload.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, startTestBerth, type TestBerth } from '../helpers/berth.ts';
import { createProject, destinationBody, FAST_EXPORT_ENV, readParquet, seedRuns, startExportS3 } from '../helpers/exports.ts';
import type { TestS3 } from '../helpers/s3/index.ts';
import type { RunSource } from '../../src/modules/exports/index.ts';

// The run source the workers read through: optional delay, injected failures, and a gate that holds every
// export run at its Nth page (file 2 of each run is then open, with no upload in flight) until released.
const control = {
  delayMs: 0, failures: 0, scans: 0, blockFromScan: 0,
  perRun: new Map<string, number>(),
  gate: Promise.resolve(),
  release: () => {},
  hold(fromScan: number) {
    this.blockFromScan = fromScan;
    this.perRun.clear();
    this.gate = new Promise((resolve) => {
      this.release = () => {
        this.blockFromScan = 0;
        resolve();
      };
    });
  },
};
const wrap = (source: RunSource): RunSource => ({
  async scan(request) {
    control.scans += 1;
    const nth = (control.perRun.get(request.startTime) ?? 0) + 1;
    control.perRun.set(request.startTime, nth);
    if (control.blockFromScan > 0 && nth >= control.blockFromScan) await control.gate;
    if (control.delayMs > 0) await sleep(control.delayMs);
    if (control.failures > 0) {
      control.failures -= 1;
      throw new Error('connection to the database lost (injected)');
    }
    return source.scan(request);
  },
});

let server: TestBerth;
let s3: TestS3;
let sessionId: string;
const START = '2026-05-10T00:00:00Z';
const END = '2026-05-12T00:00:00Z';

before(async () => {
  [server, s3] = await Promise.all([
    startTestBerth({
      env: { ...FAST_EXPORT_ENV, BERTH_EXPORT_RETRY_LIMIT: '2', BERTH_EXPORT_ROWS_PER_FILE: '100', BERTH_EXPORT_ROW_GROUP_ROWS: '50', BERTH_EXPORT_SCAN_PAGE_SIZE: '50' },
      startOptions: { wrapExportRunSource: wrap },
    }),
    startExportS3(['exports', 'doomed']),
  ]);
  sessionId = await createProject(server.api);
  // 600 runs over two days: 300 per export run.
  await seedRuns(server.berth.db, { tenantId: server.workspaceId, sessionId, from: START, count: 600, stepMs: 288_000 });
});
after(async () => {
  await server.close();
  await s3.stop();
});

async function destination(bucket = 'exports'): Promise<string> {
  const response = await server.api('POST', '/api/v1/bulk-exports/destinations', { body: destinationBody(s3, { bucket, prefix: 'f' }) });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body.id;
}

async function startExport(destinationId: string): Promise<string> {
  const response = await server.api('POST', '/api/v1/bulk-exports', {
    body: { bulk_export_destination_id: destinationId, session_id: sessionId, start_time: START, end_time: END },
  });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body.id;
}

async function finalState(id: string): Promise<{ export: any; runs: any[] }> {
  return eventually(async () => {
    const exp = (await server.api('GET', `/api/v1/bulk-exports/${id}`)).body;
    if (!['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEDOUT'].includes(exp.status)) return undefined;
    return { export: exp, runs: (await server.api('GET', `/api/v1/bulk-exports/${id}/runs`)).body };
  }, 60_000, `export ${id} to finish`);
}

async function assertExactRows(id: string): Promise<void> {
  const { rows } = await readParquet(s3, 'exports', `f/export_id=${id}/`, 'id');
  const ids = rows.map((row) => row.id);
  assert.equal(ids.length, 600);
  assert.equal(new Set(ids).size, 600, 'no duplicate ids');
}

const isUploadPart = (request: { method: string; query: Readonly<Record<string, string | string[]>> }) => request.method === 'PUT' && request.query.uploadId !== undefined;

describe('retried failures', () => {
  test('S3 5xx answers on part uploads are retried and the export completes with every row once', async () => {
    const destinationId = await destination();
    // More failures in a row than the SDK's own attempts, so the run attempt itself fails once.
    // Only the first day's run, and more failures in a row than the SDK's own attempts: that run attempt fails once.
    const fault = s3.injectFault({ kind: 'internal-error', times: 3, match: (request) => isUploadPart(request) && request.key!.includes('/day=10/') });
    const id = await startExport(destinationId);
    const { export: exp, runs } = await finalState(id);
    assert.equal(exp.status, 'COMPLETED');
    assert.equal(fault.hits, 3);
    const retried = runs.filter((run) => run.retry_number > 0);
    assert.equal(retried.length, 1);
    assert.match(retried[0].errors.retry_0, /InternalError|temporarily/);
    await assertExactRows(id);
  });

  test('connection resets are retried', async () => {
    const destinationId = await destination();
    const fault = s3.injectFault({ kind: 'reset', times: 3, match: (request) => isUploadPart(request) && request.key!.includes('/day=11/') });
    const id = await startExport(destinationId);
    const { export: exp, runs } = await finalState(id);
    assert.equal(exp.status, 'COMPLETED');
    assert.equal(fault.hits, 3);
    assert.deepEqual(runs.map((run) => run.retry_number), [0, 1]);
    await assertExactRows(id);
  });

  test('a database error while reading runs is retried from the checkpoint', async () => {
    const destinationId = await destination();
    control.failures = 1;
    const id = await startExport(destinationId);
    const { export: exp, runs } = await finalState(id);
    assert.equal(exp.status, 'COMPLETED');
    const errors = runs.flatMap((run) => Object.entries(run.errors));
    assert.deepEqual(errors, [['retry_0', 'Error: connection to the database lost (injected)']]);
    await assertExactRows(id);
  });

  test('a run whose retries run out fails the whole export', async () => {
    const destinationId = await destination();
    control.failures = 1000;
    try {
      const id = await startExport(destinationId);
      const { export: exp, runs } = await finalState(id);
      assert.equal(exp.status, 'FAILED');
      const failed = runs.filter((run) => run.status === 'FAILED');
      assert.equal(failed.length, 1);
      assert.deepEqual(Object.keys(failed[0].errors), ['retry_0', 'retry_1', 'retry_2']);
      assert.equal(failed[0].retry_number, 2);
      assert.ok(runs.every((run) => ['FAILED', 'CANCELLED'].includes(run.status)));
    } finally {
      control.failures = 0;
    }
  });
});

describe('failures that are not retried', () => {
  test('the bucket deleted mid-export fails the export at once', async () => {
    const destinationId = await destination('doomed');
    // Held after the first file of each run is committed and before the next opens: nothing in flight.
    control.hold(3);
    try {
      const id = await startExport(destinationId);
      await waitForFiles(id, false);
      await s3.deleteBucket('doomed');
      control.release();
      const { export: exp, runs } = await finalState(id);
      assert.equal(exp.status, 'FAILED');
      const failed = runs.filter((run) => run.status === 'FAILED');
      assert.ok(failed.length >= 1);
      for (const run of failed) {
        assert.equal(run.retry_number, 0, 'not retried');
        assert.deepEqual(Object.keys(run.errors), ['retry_0']);
        assert.match(run.errors.retry_0, /^Destination error: NoSuchBucket/);
      }
    } finally {
      control.release();
    }
  });
});

/** Waits until both runs of the export have committed one file and have (or have not) the next one open. */
async function waitForFiles(id: string, nextOpen: boolean): Promise<void> {
  await eventually(async () => {
    const rows = await server.berth.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM bulk_export_runs WHERE bulk_export_id = $1 AND (pending_upload IS NOT NULL) = $2 AND cardinality(exported_files) = 1`, [id, nextOpen]);
    return rows[0]!.n === 2 ? true : undefined;
  }, 30_000, 'both runs to have a file open');
}

describe('cancel', () => {
  test('stops running work promptly, aborts the open upload, ends CANCELLED and stays so', async () => {
    const destinationId = await destination();
    control.hold(4);
    try {
      const id = await startExport(destinationId);
      await waitForFiles(id, true);
      const open = await server.berth.db.query<{ pending_upload: { upload_id: string } }>(
        'SELECT pending_upload FROM bulk_export_runs WHERE bulk_export_id = $1', [id]);
      const cancelled = await server.api('PATCH', `/api/v1/bulk-exports/${id}`, { body: { status: 'Cancelled' } });
      assert.equal(cancelled.status, 200);
      assert.equal(cancelled.body.status, 'CANCELLED');
      assert.ok(cancelled.body.finished_at);
      const runs = (await server.api('GET', `/api/v1/bulk-exports/${id}/runs`)).body;
      assert.ok(runs.every((run: any) => run.status === 'CANCELLED'));
      // The workers stop waiting for their (held) reads and abort the uploads they had open.
      await eventually(async () => {
        const aborted = s3.requests.filter((request) => request.method === 'DELETE' && request.query.uploadId !== undefined);
        return open.every((row) => aborted.some((request) => request.query.uploadId === row.pending_upload.upload_id)) ? true : undefined;
      }, 10_000, 'the open uploads to be aborted');
      const scans = control.scans;
      control.release();
      await sleep(500);
      assert.equal(control.scans, scans, 'no more reading after cancel');
      const again = await server.api('PATCH', `/api/v1/bulk-exports/${id}`, { body: { status: 'CANCELLED' } });
      assert.equal(again.status, 200);
      assert.equal(again.body.status, 'CANCELLED');
      assert.equal((await server.api('GET', `/api/v1/bulk-exports/${id}`)).body.progress.files_written, 2, 'nothing written after cancel');
    } finally {
      control.release();
    }
  });
});
