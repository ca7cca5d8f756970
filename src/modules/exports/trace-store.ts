// The trace store as the export module uses it, through the tracing module's public index.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import { parseFilter, RunScanner } from '../tracing/index.ts';
import type { TraceStorePort } from './ports.ts';

export function traceStorePort(db: Db): TraceStorePort {
  return {
    runs: new RunScanner(db),
    checkFilter(text) {
      parseFilter(text);
    },
    async projectExists(tenantId, sessionId) {
      // The tracing index does not offer a project lookup yet; this reads its projects table directly and
      // should move behind the tracing index once it exports one.
      const result = await sql`SELECT 1 FROM tracer_sessions WHERE tenant_id = ${tenantId} AND id = ${sessionId}`.execute(db.kysely);
      return result.rows.length > 0;
    },
  };
}
