// The SQL of tracing projects (sessions). Every query names the tenant.
import { randomUUID } from 'node:crypto';
import { CompiledQuery } from 'kysely';
import type { Db } from '../../platform/db/index.ts';

export interface SessionRow {
  id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  extra: Record<string, unknown> | null;
  reference_dataset_id: string | null;
  start_time: string;
  end_time: string | null;
  run_count: number;
  last_run_start_time: string | null;
}

export interface SessionFields {
  name?: string;
  description?: string | null;
  extra?: Record<string, unknown> | null;
  reference_dataset_id?: string | null;
  start_time?: string;
  end_time?: string | null;
}

const COLUMNS = `s.id, s.tenant_id, s.name, s.description, s.extra, s.reference_dataset_id, s.start_time, s.end_time,
  (SELECT count(*) FROM runs r WHERE r.tenant_id = s.tenant_id AND r.session_id = s.id) AS run_count,
  (SELECT max(r.start_time) FROM runs r WHERE r.tenant_id = s.tenant_id AND r.session_id = s.id) AS last_run_start_time`;

export interface SessionListFilter {
  name?: string;
  nameContains?: string;
  ids?: string[];
  referenceDatasetId?: string;
}

export class SessionsRepo {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Ids of the named projects, creating the missing ones (concurrent creators agree on one row). */
  async ensureByName(tenantId: string, names: readonly string[]): Promise<Map<string, string>> {
    const unique = [...new Set(names)];
    await this.#db.query(
      `INSERT INTO tracer_sessions (id, tenant_id, name) SELECT gen_random_uuid(), $1, n FROM unnest($2::text[]) AS n
       ON CONFLICT (tenant_id, name) DO NOTHING`,
      [tenantId, unique],
    );
    const rows = await this.#db.query<{ id: string; name: string }>('SELECT id, name FROM tracer_sessions WHERE tenant_id = $1 AND name = ANY($2::text[])', [tenantId, unique]);
    return new Map(rows.map((row) => [row.name, row.id]));
  }

  /** Which of these ids are projects of the tenant. */
  async existing(tenantId: string, ids: readonly string[]): Promise<Set<string>> {
    const rows = await this.#db.query<{ id: string }>('SELECT id FROM tracer_sessions WHERE tenant_id = $1 AND id = ANY($2::uuid[])', [tenantId, [...new Set(ids)]]);
    return new Set(rows.map((row) => row.id));
  }

  async get(tenantId: string, id: string): Promise<SessionRow | undefined> {
    const rows = await this.#db.query<SessionRow>(`SELECT ${COLUMNS} FROM tracer_sessions s WHERE s.tenant_id = $1 AND s.id = $2`, [tenantId, id]);
    return rows[0];
  }

  async getByName(tenantId: string, name: string): Promise<SessionRow | undefined> {
    const rows = await this.#db.query<SessionRow>(`SELECT ${COLUMNS} FROM tracer_sessions s WHERE s.tenant_id = $1 AND s.name = $2`, [tenantId, name]);
    return rows[0];
  }

  /** Inserts a project; undefined when the name is taken. */
  async create(tenantId: string, fields: SessionFields & { name: string; id?: string }): Promise<SessionRow | undefined> {
    const rows = await this.#db.query<{ id: string }>(
      `INSERT INTO tracer_sessions (id, tenant_id, name, description, extra, reference_dataset_id, start_time, end_time)
       VALUES ($1, $2, $3, $4, $5, $6, COALESCE($7::timestamptz, now()), $8) ON CONFLICT DO NOTHING RETURNING id`,
      [fields.id ?? randomUUID(), tenantId, fields.name, fields.description ?? null, jsonParam(fields.extra), fields.reference_dataset_id ?? null, fields.start_time ?? null, fields.end_time ?? null],
    );
    return rows[0] ? this.get(tenantId, rows[0].id) : undefined;
  }

  /** Updates the given fields; 'conflict' when the new name is taken. */
  async update(tenantId: string, id: string, fields: SessionFields): Promise<SessionRow | undefined | 'conflict'> {
    const sets: string[] = [];
    const params: unknown[] = [tenantId, id];
    for (const [column, value] of Object.entries(fields)) {
      if (value === undefined) continue;
      params.push(column === 'extra' ? jsonParam(value as Record<string, unknown> | null) : value);
      sets.push(`${column} = $${params.length}`);
    }
    if (sets.length > 0) {
      try {
        await this.#db.query(`UPDATE tracer_sessions SET ${sets.join(', ')}, updated_at = now() WHERE tenant_id = $1 AND id = $2`, params);
      } catch (error) {
        if ((error as { code?: string }).code === '23505') return 'conflict';
        throw error;
      }
    }
    return this.get(tenantId, id);
  }

  async list(tenantId: string, filter: SessionListFilter, limit: number, offset: number): Promise<SessionRow[]> {
    const conditions = ['s.tenant_id = $1'];
    const params: unknown[] = [tenantId];
    if (filter.name !== undefined) {
      params.push(filter.name);
      conditions.push(`s.name = $${params.length}`);
    }
    if (filter.nameContains !== undefined) {
      params.push(filter.nameContains.toLowerCase());
      conditions.push(`strpos(lower(s.name), $${params.length}) > 0`);
    }
    if (filter.ids !== undefined) {
      params.push(filter.ids);
      conditions.push(`s.id = ANY($${params.length}::uuid[])`);
    }
    if (filter.referenceDatasetId !== undefined) {
      params.push(filter.referenceDatasetId);
      conditions.push(`s.reference_dataset_id = $${params.length}`);
    }
    params.push(limit, offset);
    return this.#db.query<SessionRow>(
      `SELECT ${COLUMNS} FROM tracer_sessions s WHERE ${conditions.join(' AND ')} ORDER BY s.name, s.id LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
  }

  /** Deletes the project; its runs and their attachments go with it (cascade), and their feedback here. */
  async delete(tenantId: string, id: string): Promise<boolean> {
    return this.#db.kysely.transaction().execute(async (trx) => {
      await trx.executeQuery(CompiledQuery.raw(
        'DELETE FROM feedback f USING runs r WHERE f.tenant_id = $1 AND r.tenant_id = $1 AND r.session_id = $2 AND f.run_id = r.id',
        [tenantId, id],
      ));
      await trx.executeQuery(CompiledQuery.raw('DELETE FROM feedback WHERE tenant_id = $1 AND session_id = $2', [tenantId, id]));
      const result = await trx.executeQuery(CompiledQuery.raw('DELETE FROM tracer_sessions WHERE tenant_id = $1 AND id = $2', [tenantId, id]));
      return Number(result.numAffectedRows ?? 0) > 0;
    });
  }
}

function jsonParam(value: Record<string, unknown> | null | undefined): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}
