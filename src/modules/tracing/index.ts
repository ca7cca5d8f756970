// The trace store: tracing projects (sessions), run ingestion compatible with the langsmith SDK, feedback,
// run queries with the filter language, and the RunScanner that bulk export reads runs through.
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../platform/db/index.ts';

export { EXPORTABLE_FIELDS } from './run-fields.ts';
export { RunScanner } from './run-scanner.ts';
export type { RunScanRequest, ScannedRun } from './run-scanner.ts';
export { parseFilter, FilterError, isBlankFilter } from './filter/index.ts';

export interface TracingOptions {
  /** Largest accepted ingest request body in bytes, after decompression (413 beyond). */
  maxBodyBytes: number;
}

export interface Tracing {
  registerRoutes(app: FastifyInstance): void;
}

export function createTracing(deps: { db: Db; options: TracingOptions }): Tracing {
  void deps;
  return { registerRoutes: () => undefined };
}
