// What the API answers: stored rows in the public shapes.
import type { ExportProgress, ExportRow, RunRow } from './exports-repo.ts';

const NO_PROGRESS: ExportProgress = { runs_total: 0, runs_completed: 0, rows_written: 0, files_written: 0 };

export function exportView(row: ExportRow, progress: ExportProgress | undefined) {
  return {
    bulk_export_destination_id: row.bulk_export_destination_id,
    session_id: row.session_id,
    start_time: row.start_time,
    end_time: row.end_time,
    filter: row.filter,
    format: row.format,
    format_version: row.format_version,
    compression: row.compression,
    interval_hours: row.interval_hours,
    export_fields: row.export_fields,
    id: row.id,
    tenant_id: row.tenant_id,
    status: row.status,
    created_at: row.created_at,
    updated_at: row.updated_at,
    finished_at: row.finished_at,
    source_bulk_export_id: row.source_bulk_export_id,
    progress: progress ?? NO_PROGRESS,
  };
}

export function runView(row: RunRow) {
  return {
    id: row.id,
    bulk_export_id: row.bulk_export_id,
    status: row.status,
    created_at: row.created_at,
    updated_at: row.updated_at,
    finished_at: row.finished_at,
    retry_number: row.retry_number,
    errors: row.errors,
    start_time: row.start_time,
    end_time: row.end_time,
    metadata: {
      prefix: row.prefix,
      start_time: row.start_time,
      end_time: row.end_time,
      result: {
        rows_written: Number(row.rows_written),
        exported_files: row.exported_files,
        export_path: row.prefix,
        latest_cursor: row.latest_cursor ? `${row.latest_cursor.start_time}|${row.latest_cursor.id}` : null,
      },
    },
  };
}
