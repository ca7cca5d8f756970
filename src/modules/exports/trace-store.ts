// The trace store as the export module uses it, through the tracing module's public index.
import type { Db } from '../../platform/db/index.ts';
import { AppError } from '../../platform/errors.ts';
import { parseFilter, RunScanner } from '../tracing/index.ts';
import type { TraceStorePort } from './ports.ts';

/** The tracing projects service, as far as exports need it: `get` throws not_found for an unknown project. */
export interface ProjectLookup {
  get(tenantId: string, id: string): Promise<unknown>;
}

export function traceStorePort(db: Db, projects: ProjectLookup): TraceStorePort {
  return {
    runs: new RunScanner(db),
    checkFilter(text) {
      parseFilter(text);
    },
    async projectExists(tenantId, sessionId) {
      try {
        await projects.get(tenantId, sessionId);
        return true;
      } catch (error) {
        if (error instanceof AppError && error.kind === 'not_found') return false;
        throw error;
      }
    },
  };
}
