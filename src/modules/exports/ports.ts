// What the export module needs from the trace store, as ports: main.ts wires the trace store's own
// implementations in, and tests can put a fake source in front of a run (fault injection).

// The scan request and row shapes are the trace store's own (its RunScanner is the real source).
import type { RunScanRequest, ScannedRun } from '../tracing/index.ts';

export type { RunScanRequest, ScannedRun };
export type RunCursor = NonNullable<RunScanRequest['after']>;

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
