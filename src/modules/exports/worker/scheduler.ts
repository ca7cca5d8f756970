// Scheduled exports: each window [start + k·interval, start + (k+1)·interval) becomes a spawned export once
// it has ended, starting 10 minutes after its end so that late runs are included. The parent row is locked
// while its windows are spawned and a unique index on (source, start_time) backs that up, so no window is
// ever spawned twice, whatever the number of processes. Spawning follows the parent's own record, so it
// survives restarts and catches up on windows missed while nothing was running.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { ExportRow, ExportsRepo } from '../exports-repo.ts';
import { SPAWN_DELAY_MS, type ExportsService } from '../exports-service.ts';
import { isoToMicros, microsToIso } from '../timestamps.ts';

/** Windows spawned per parent and tick, so a schedule that starts far in the past cannot hold a lock for long. */
const MAX_WINDOWS_PER_TICK = 50;

export class ExportScheduler {
  readonly #repo: ExportsRepo;
  readonly #service: ExportsService;

  constructor(repo: ExportsRepo, service: ExportsService) {
    this.#repo = repo;
    this.#service = service;
  }

  /** Spawns every window that has ended by `now`; returns the ids of the exports created. */
  async tick(now: Date): Promise<string[]> {
    const nowMicros = now.getTime() * 1000;
    return this.#repo.transaction(async (trx) => {
      const due = await sql<ExportRow>`SELECT * FROM bulk_exports
        WHERE interval_hours IS NOT NULL AND status = 'RUNNING'
          AND next_window_start + make_interval(hours => interval_hours) <= ${now.toISOString()}::timestamptz
        ORDER BY seq LIMIT 20 FOR UPDATE SKIP LOCKED`.execute(trx);
      const spawned: string[] = [];
      for (const parent of due.rows) {
        const step = parent.interval_hours! * 3_600_000_000;
        let windowStart = isoToMicros(parent.next_window_start!);
        for (let i = 0; i < MAX_WINDOWS_PER_TICK && windowStart + step <= nowMicros; i++) {
          const windowEnd = windowStart + step;
          const child = await this.#service.insertWithRuns(trx, {
            id: randomUUID(),
            tenant_id: parent.tenant_id,
            bulk_export_destination_id: parent.bulk_export_destination_id,
            session_id: parent.session_id,
            start_time: microsToIso(windowStart),
            end_time: microsToIso(windowEnd),
            filter: parent.filter,
            format: parent.format,
            format_version: parent.format_version,
            compression: parent.compression,
            interval_hours: null,
            export_fields: parent.export_fields,
            source_bulk_export_id: parent.id,
            status: 'CREATED',
            not_before: new Date(windowEnd / 1000 + SPAWN_DELAY_MS).toISOString(),
            next_window_start: null,
          });
          if (child) spawned.push(child.id);
          windowStart = windowEnd;
        }
        await sql`UPDATE bulk_exports SET next_window_start = ${microsToIso(windowStart)}::timestamptz, updated_at = now()
          WHERE id = ${parent.id}`.execute(trx);
      }
      return spawned;
    });
  }
}
