// Tunables of bulk export, with the spec's defaults; config.ts fills them from the environment.
import type { Compression } from './schemas.ts';

export interface ExportSettings {
  /** Runs one worker process executes at once. */
  workerConcurrency: number;
  maxRunsPerExport: number;
  maxExportsPerWorkspace: number;
  retryLimit: number;
  retryDelaySeconds: number;
  runTimeoutSeconds: number;
  workflowTimeoutSeconds: number;
  /** A run whose worker has not renewed its lease for this long is taken over by another worker. */
  leaseSeconds: number;
  heartbeatSeconds: number;
  /** How often idle workers look for work and the supervisor checks timeouts and schedules. */
  pollIntervalMs: number;
  rowsPerFile: number;
  rowGroupRows: number;
  scanPageSize: number;
  partSizeBytes: number;
  compression: Compression;
}

export const DEFAULT_EXPORT_SETTINGS: ExportSettings = {
  workerConcurrency: 4,
  maxRunsPerExport: 45,
  maxExportsPerWorkspace: 15,
  retryLimit: 20,
  retryDelaySeconds: 30,
  runTimeoutSeconds: 4 * 3600,
  workflowTimeoutSeconds: 72 * 3600,
  leaseSeconds: 60,
  heartbeatSeconds: 10,
  pollIntervalMs: 1000,
  rowsPerFile: 500_000,
  rowGroupRows: 5_000,
  scanPageSize: 2_500,
  partSizeBytes: 8 * 1024 * 1024,
  compression: 'zstd',
};
