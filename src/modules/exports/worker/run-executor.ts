// Executes one export run from its checkpoint: a keyset scan of its day partition, Parquet row groups
// streamed to S3 multipart, a new file every `rowsPerFile` rows, and a checkpoint committed after each file.
// Files are named by their index in the run, so a file re-written after a crash replaces its earlier copy:
// every row lands in exactly one file whatever happens between upload and checkpoint.
import type { S3Client } from '@aws-sdk/client-s3';
import type { Logger } from 'pino';
import type { ExportField } from '../fields.ts';
import { fileName } from '../layout.ts';
import { columnPlan } from '../parquet/columns.ts';
import { abortUpload } from '../parquet/multipart-upload.ts';
import { RowSizeEstimate } from './row-size.ts';
import { ParquetFile } from '../parquet/parquet-file.ts';
import type { RunCursor, RunSource, ScannedRun } from '../ports.ts';
import type { Compression, FormatVersion } from '../schemas.ts';

export interface RunTuning {
  /** Rows per keyset page read from the database. */
  scanPageSize: number;
  rowGroupRows: number;
  rowsPerFile: number;
  partSizeBytes: number;
  /** Byte budgets (as JSON text) of one page read and one row group; the row counts above are upper bounds. */
  pageBytes?: number;
  rowGroupBytes?: number;
}

const DEFAULT_PAGE_BYTES = 8 * 1024 * 1024;
const DEFAULT_ROW_GROUP_BYTES = 8 * 1024 * 1024;

export interface RunJob {
  runId: string;
  tenantId: string;
  sessionId: string;
  startTime: string;
  endTime: string;
  filter: string | null;
  fields: readonly ExportField[];
  formatVersion: FormatVersion;
  compression: Compression;
  bucket: string;
  prefix: string;
  cursor: RunCursor | null;
  filesWritten: number;
  pendingUpload: { upload_id: string; key: string } | null;
}

export interface FileCheckpoint {
  key: string;
  rows: number;
  cursor: RunCursor;
}

export interface RunProgressSink {
  /** Records the open upload before any part is sent (so a successor can abort it). */
  uploadStarted(upload: { upload_id: string; key: string }): Promise<void>;
  /** Commits a finished file: cursor, rows and file list move together. */
  fileCommitted(checkpoint: FileCheckpoint): Promise<void>;
}

export interface RunOutcome {
  rows: number;
  files: number;
  bytes: number;
}

export async function executeRun(job: RunJob, deps: {
  client: S3Client; source: RunSource; tuning: RunTuning; progress: RunProgressSink; signal: AbortSignal; logger: Logger;
}): Promise<RunOutcome> {
  const { client, source, tuning, progress, signal } = deps;
  if (job.pendingUpload) {
    // Left open by an attempt that died mid-file; that file is written again from the checkpoint.
    const aborted = await abortUpload(client, job.bucket, job.pendingUpload.key, job.pendingUpload.upload_id);
    deps.logger.info({ key: job.pendingUpload.key, aborted }, 'aborted the dangling multipart upload of an earlier attempt');
  }
  const plan = columnPlan(job.fields, job.formatVersion);
  const fields = job.fields;
  const sizes = new RowSizeEstimate();
  const pageBytes = tuning.pageBytes ?? DEFAULT_PAGE_BYTES;
  const rowGroupBytes = tuning.rowGroupBytes ?? DEFAULT_ROW_GROUP_BYTES;
  const scan = (after: RunCursor | null) => {
    const limit = sizes.rowsWithin(pageBytes, tuning.scanPageSize);
    const rows = source.scan({
      tenantId: job.tenantId, sessionId: job.sessionId, startTime: job.startTime, endTime: job.endTime, filter: job.filter,
      fields, after, limit,
    });
    return { rows, limit };
  };

  let fileIndex = job.filesWritten;
  let file: ParquetFile | undefined;
  let group: ScannedRun[] = [];
  let lastRow: ScannedRun | undefined;
  const outcome: RunOutcome = { rows: 0, files: 0, bytes: 0 };

  const openFile = async () => {
    const key = `${job.prefix}/${fileName(job.runId, fileIndex)}`;
    return ParquetFile.open({
      client, bucket: job.bucket, key, plan, compression: job.compression, partSizeBytes: tuning.partSizeBytes, signal,
      onUploadStarted: (uploadId) => progress.uploadStarted({ upload_id: uploadId, key }),
    });
  };
  const closeFile = async (open: ParquetFile) => {
    await open.writeRowGroup(group);
    group = [];
    await open.close();
    signal.throwIfAborted();
    await progress.fileCommitted({ key: open.key, rows: open.rows, cursor: { start_time: lastRow!.start_time, id: lastRow!.id } });
    outcome.rows += open.rows;
    outcome.files += 1;
    outcome.bytes += open.bytesUploaded;
    fileIndex += 1;
  };

  try {
    // The next page is read while the current one is encoded and uploaded.
    let pending: { rows: Promise<ScannedRun[]>; limit: number } | undefined = scan(job.cursor);
    while (pending) {
      // A slow read must not delay a cancel: stop waiting as soon as the run is aborted.
      const page: ScannedRun[] = await untilAborted(pending.rows, signal);
      sizes.observe(page);
      const last = page.at(-1);
      // A short page is the last one.
      pending = page.length === pending.limit && last ? scan({ start_time: last.start_time, id: last.id }) : undefined;
      // Keep a rejected prefetch from becoming an unhandled rejection when this loop exits early.
      pending?.rows.catch(() => undefined);
      const groupRows = sizes.rowsWithin(rowGroupBytes, tuning.rowGroupRows);
      for (const row of page) {
        file ??= await openFile();
        group.push(row);
        lastRow = row;
        if (file.rows + group.length >= tuning.rowsPerFile) {
          await closeFile(file);
          file = undefined;
        } else if (group.length >= groupRows) {
          await file.writeRowGroup(group);
          group = [];
          signal.throwIfAborted();
        }
      }
    }
    if (file) {
      await closeFile(file);
      file = undefined;
    }
    return outcome;
  } catch (error) {
    if (file) await file.abort();
    throw error;
  }
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
