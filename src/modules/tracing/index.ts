// The trace store: tracing projects (sessions), run ingestion compatible with the langsmith SDK, feedback,
// run queries with the filter language, and the RunScanner that bulk export reads runs through.
//
// Decisions (see README "Trace store"):
// - A batch with some invalid runs keeps the good ones and answers 422 naming the bad ones (the SDK does
//   not retry or split a batch after a 4xx, so rejecting it whole would lose every good run).
// - Projects are created on first use by name in the caller's workspace.
// - Every route needs an API key, /info included: the SDK sends its key there too.
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../platform/db/index.ts';
import { FeedbackService } from './feedback-service.ts';
import { IngestService } from './ingest-service.ts';
import { RunQueryService } from './query-service.ts';
import { registerTracingRoutes } from './routes.ts';
import { RunsRepo } from './runs-repo.ts';
import { SessionsRepo } from './sessions-repo.ts';
import { SessionsService } from './sessions-service.ts';

export { EXPORTABLE_FIELDS } from './run-fields.ts';
export { RunScanner } from './run-scanner.ts';
export type { RunScanRequest, ScannedRun } from './run-scanner.ts';
export { parseFilter, FilterError, isBlankFilter } from './filter/index.ts';

/** Room left for multipart framing between the advertised batch size and the enforced body limit. */
const FRAMING_ALLOWANCE = 1024 * 1024;

export interface TracingOptions {
  /** Largest accepted ingest request body in bytes, after decompression (413 beyond). */
  maxBodyBytes: number;
  version: string;
}

export interface Tracing {
  ingest: IngestService;
  queries: RunQueryService;
  sessions: SessionsService;
  feedback: FeedbackService;
  registerRoutes(app: FastifyInstance): void;
}

export function createTracing(deps: { db: Db; options: TracingOptions }): Tracing {
  const sessionsRepo = new SessionsRepo(deps.db);
  const ingest = new IngestService(new RunsRepo(deps.db), sessionsRepo);
  const sessions = new SessionsService(sessionsRepo, () => ingest.forgetProjects());
  const queries = new RunQueryService(deps.db);
  const feedback = new FeedbackService(deps.db);
  const { maxBodyBytes, version } = deps.options;
  return {
    ingest, queries, sessions, feedback,
    registerRoutes: (app) => registerTracingRoutes(app, {
      ingest, queries, sessions, feedback, version, maxBodyBytes,
      batchSizeLimitBytes: Math.max(1024, maxBodyBytes - FRAMING_ALLOWANCE),
    }),
  };
}
