// Exports: create-time rules, reading with progress, cancellation. The work itself happens in worker/.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../platform/db/index.ts';
import { AppError, badRequest, conflict, InputValidationError, notFound } from '../../platform/errors.ts';
import { literalIssue, type ValidationIssue } from '../../platform/http/validation/pydantic.ts';
import type { DestinationsRepo } from './destinations-repo.ts';
import type { ExportRow, ExportsRepo, NewExport, Tx } from './exports-repo.ts';
import { dayPartitions, partitionPrefix } from './layout.ts';
import type { Clock, TraceStorePort } from './ports.ts';
import { COMPRESSION_ALIASES, type Compression, type ExportCreateRequest, type FormatVersion } from './schemas.ts';
import { exportView, runView } from './views.ts';

export const CANCEL_CHANNEL = 'bulk_export_cancelled';
export const WORK_CHANNEL = 'bulk_export_work';
/** A spawned export starts this long after its window ends, so late-submitted runs are included. */
export const SPAWN_DELAY_MS = 10 * 60_000;

export interface ExportDefaults {
  compression: Compression;
}

export class ExportsService {
  readonly #repo: ExportsRepo;
  readonly #destinations: DestinationsRepo;
  readonly #traces: TraceStorePort;
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #defaults: ExportDefaults;

  constructor(deps: { repo: ExportsRepo; destinations: DestinationsRepo; traces: TraceStorePort; db: Db; clock: Clock; defaults: ExportDefaults }) {
    this.#repo = deps.repo;
    this.#destinations = deps.destinations;
    this.#traces = deps.traces;
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#defaults = deps.defaults;
  }

  async create(tenantId: string, input: ExportCreateRequest) {
    const scheduled = input.interval_hours !== undefined && input.interval_hours !== null;
    const issues: ValidationIssue[] = [];
    const hasEnd = input.end_time !== undefined && input.end_time !== null;
    if (!scheduled && !hasEnd) {
      issues.push({ type: 'missing', loc: ['body', 'end_time'], msg: 'Field required: end_time is required unless interval_hours makes the export scheduled', input: null });
    }
    if (scheduled && hasEnd) {
      issues.push({ type: 'value_error', loc: ['body', 'end_time'], msg: 'Value error, end_time must be omitted for scheduled exports (interval_hours is set)', input: input.end_time, ctx: { error: 'end_time must be omitted for scheduled exports' } });
    }
    const [startTime, endTime] = await this.#repo.normalizeTimes(hasEnd ? [input.start_time, input.end_time!] : [input.start_time]);
    if (hasEnd && !scheduled && !(Date.parse(endTime!) > Date.parse(startTime!) || endTime! > startTime!)) {
      issues.push({ type: 'value_error', loc: ['body', 'end_time'], msg: 'Value error, end_time must be after start_time', input: input.end_time, ctx: { error: 'end_time must be after start_time' } });
    }
    if (issues.length > 0) throw new InputValidationError(issues);

    const filter = input.filter?.trim() ? input.filter : null;
    if (filter !== null) {
      try {
        this.#traces.checkFilter(filter);
      } catch (error) {
        if (error instanceof AppError) throw error;
        throw badRequest((error as Error).message);
      }
    }
    const destination = await this.#destinations.get(tenantId, input.bulk_export_destination_id);
    if (!destination) throw notFound(`Destination ${input.bulk_export_destination_id} not found`);
    if (!(await this.#traces.projectExists(tenantId, input.session_id))) throw notFound(`Session ${input.session_id} not found`);

    const fields = input.export_fields ? [...new Set(input.export_fields)] : null;
    const compression = input.compression ? (COMPRESSION_ALIASES[input.compression] ?? input.compression as Compression) : this.#defaults.compression;
    const now = this.#clock.now().toISOString();
    const row = await this.#repo.transaction(async (trx) => {
      const created = await this.insertWithRuns(trx, {
        id: randomUUID(),
        tenant_id: tenantId,
        bulk_export_destination_id: destination.id,
        session_id: input.session_id,
        start_time: startTime!,
        end_time: scheduled ? null : endTime!,
        filter,
        format: 'Parquet',
        format_version: (input.format_version ?? 'v1') as FormatVersion,
        compression,
        interval_hours: input.interval_hours ?? null,
        export_fields: fields,
        source_bulk_export_id: null,
        // The scheduled source export stays RUNNING while its schedule is active (decisions.md).
        status: scheduled ? 'RUNNING' : 'CREATED',
        not_before: now,
        next_window_start: scheduled ? startTime! : null,
      });
      return created!;
    });
    await this.#db.notify(WORK_CHANNEL, row.id).catch(() => undefined);
    return this.#view(row);
  }

  /** Inserts an export and, unless it is a schedule, its runs (one per UTC day). Undefined when the row already exists. */
  async insertWithRuns(trx: Tx, row: NewExport): Promise<ExportRow | undefined> {
    const created = await this.#repo.insertExport(trx, row);
    if (!created || created.interval_hours !== null) return created;
    const destination = await this.#destinations.get(row.tenant_id, row.bulk_export_destination_id, trx);
    if (!destination) throw notFound(`Destination ${row.bulk_export_destination_id} not found`);
    const location = { bucket: destination.config.bucket_name, prefix: destination.config.prefix, includeBucketInPrefix: destination.config.include_bucket_in_prefix };
    const where = { exportId: created.id, tenantId: created.tenant_id, sessionId: created.session_id, formatVersion: created.format_version };
    await this.#repo.insertRuns(trx, dayPartitions(created.start_time, created.end_time!).map((partition) => ({
      id: randomUUID(),
      bulk_export_id: created.id,
      tenant_id: created.tenant_id,
      status: 'CREATED',
      start_time: partition.startTime,
      end_time: partition.endTime,
      prefix: partitionPrefix(location, where, partition),
      available_at: created.not_before,
    })));
    return created;
  }

  async list(tenantId: string) {
    const rows = await this.#repo.listExports(tenantId);
    const progress = await this.#repo.progress(rows.map((row) => row.id));
    return rows.map((row) => exportView(row, progress.get(row.id)));
  }

  async get(tenantId: string, id: string) {
    return this.#view(await this.#export(tenantId, id));
  }

  async listRuns(tenantId: string, id: string) {
    await this.#export(tenantId, id);
    return (await this.#repo.listRuns(tenantId, id)).map(runView);
  }

  async getRun(tenantId: string, id: string, runId: string) {
    await this.#export(tenantId, id);
    const run = await this.#repo.getRun(tenantId, id, runId);
    if (!run) throw notFound(`Bulk export run ${runId} not found`);
    return runView(run);
  }

  /** PATCH {"status": "Cancelled"}: final, cannot be restarted. Spawned exports of a schedule keep going. */
  async patch(tenantId: string, id: string, status: string) {
    if (status.toLowerCase() !== 'cancelled') throw new InputValidationError([literalIssue(['body', 'status'], ['Cancelled'], status)]);
    const row = await this.#repo.transaction(async (trx) => {
      const current = await this.#repo.getExport(tenantId, id, trx);
      if (!current) throw notFound(`Bulk export ${id} not found`);
      if (current.status === 'CANCELLED') return current;
      if (current.status !== 'CREATED' && current.status !== 'RUNNING') {
        throw conflict(`Bulk export ${id} is already ${current.status} and cannot be cancelled`);
      }
      await this.#repo.finishExport(trx, id, 'CANCELLED', 'CANCELLED');
      return (await this.#repo.getExport(tenantId, id, trx))!;
    });
    // Workers running its runs stop at once; the lease check catches it too if this message is lost.
    await this.#db.notify(CANCEL_CHANNEL, id).catch(() => undefined);
    return this.#view(row);
  }

  async #export(tenantId: string, id: string): Promise<ExportRow> {
    const row = await this.#repo.getExport(tenantId, id);
    if (!row) throw notFound(`Bulk export ${id} not found`);
    return row;
  }

  async #view(row: ExportRow) {
    return exportView(row, (await this.#repo.progress([row.id])).get(row.id));
  }
}
