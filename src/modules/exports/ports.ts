// What the export module needs from the trace store, as ports: main.ts wires the trace store's own
// implementations in, and tests can put a fake source in front of a run (fault injection).

export interface RunCursor {
  start_time: string;
  id: string;
}

export interface RunScanRequest {
  tenantId: string;
  sessionId: string;
  /** Inclusive, compared with the run's start_time. */
  startTime: string;
  /** Exclusive. */
  endTime: string;
  filter?: string | null;
  fields: readonly string[];
  /** Keyset cursor, exclusive. */
  after?: RunCursor | null;
  limit: number;
}

/** Values: uuids and timestamps (ISO, microseconds, +00:00) as strings, jsonb parsed, arrays as string[]. */
export interface ScannedRun {
  [field: string]: unknown;
  start_time: string;
  id: string;
}

/** One page of runs ordered by (start_time, id), after the cursor. */
export interface RunSource {
  scan(req: RunScanRequest): Promise<ScannedRun[]>;
}

export interface TraceStorePort {
  runs: RunSource;
  /** Throws the filter language's error (with a `position`) when the expression does not parse. */
  checkFilter(text: string): void;
  /** True when the tracing project exists in this workspace. */
  projectExists(tenantId: string, sessionId: string): Promise<boolean>;
}

/** Time as the export module sees it; tests move it forward instead of waiting. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
