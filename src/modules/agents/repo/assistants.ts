// The only SQL for assistants and their versions.
import type { SqlExecutor } from '../../../platform/db/index.ts';
import { json, orderBy, Where } from './sql.ts';

export interface AssistantRow {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  config: Record<string, any>;
  context: Record<string, any>;
  metadata: Record<string, any>;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface AssistantFields {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

export interface AssistantFilter {
  graphId?: string;
  metadata?: Record<string, unknown>;
  name?: string;
}

const COLUMNS = 'assistant_id, graph_id, name, description, config, context, metadata, version, created_at, updated_at';
export const ASSISTANT_SORT = ['assistant_id', 'graph_id', 'name', 'created_at', 'updated_at'] as const;

function filterWhere(filter: AssistantFilter): Where {
  const where = new Where();
  if (filter.graphId) where.add(`graph_id = ${where.param(filter.graphId)}`);
  if (filter.metadata && Object.keys(filter.metadata).length) where.add(`metadata @> ${where.param(json(filter.metadata))}::jsonb`);
  if (filter.name) where.add(`name ILIKE '%' || ${where.param(filter.name.replace(/[\\%_]/g, (c) => `\\${c}`))} || '%'`);
  return where;
}

export class AssistantRepo {
  readonly #db: SqlExecutor;
  constructor(db: SqlExecutor) {
    this.#db = db;
  }

  /** Inserts an assistant and its first version; undefined when the id exists. */
  async insert(fields: AssistantFields, tx: SqlExecutor = this.#db): Promise<AssistantRow | undefined> {
    const rows = await tx.query<AssistantRow>(
      `WITH a AS (
         INSERT INTO agent_assistants (assistant_id, graph_id, name, description, config, context, metadata)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7::jsonb) ON CONFLICT (assistant_id) DO NOTHING RETURNING *),
       v AS (
         INSERT INTO agent_assistant_versions (assistant_id, version, graph_id, name, description, config, context, metadata)
         SELECT assistant_id, version, graph_id, name, description, config, context, metadata FROM a)
       SELECT ${COLUMNS} FROM a`,
      [fields.assistant_id, fields.graph_id, fields.name, fields.description, json(fields.config), json(fields.context), json(fields.metadata)],
    );
    return rows[0];
  }

  async get(assistantId: string, tx: SqlExecutor = this.#db): Promise<AssistantRow | undefined> {
    const rows = await tx.query<AssistantRow>(`SELECT ${COLUMNS} FROM agent_assistants WHERE assistant_id = $1`, [assistantId]);
    return rows[0];
  }

  async lock(assistantId: string, tx: SqlExecutor): Promise<AssistantRow | undefined> {
    const rows = await tx.query<AssistantRow>(`SELECT ${COLUMNS} FROM agent_assistants WHERE assistant_id = $1 FOR UPDATE`, [assistantId]);
    return rows[0];
  }

  /** Writes a new version and makes it the active one. */
  async addVersion(fields: AssistantFields, tx: SqlExecutor): Promise<AssistantRow> {
    const rows = await tx.query<AssistantRow>(
      `WITH n AS (SELECT coalesce(max(version), 0) + 1 AS version FROM agent_assistant_versions WHERE assistant_id = $1),
       v AS (
         INSERT INTO agent_assistant_versions (assistant_id, version, graph_id, name, description, config, context, metadata)
         SELECT $1, n.version, $2, $3, $4, $5::jsonb, $6::jsonb, $7::jsonb FROM n)
       UPDATE agent_assistants SET version = n.version, graph_id = $2, name = $3, description = $4, config = $5::jsonb,
         context = $6::jsonb, metadata = $7::jsonb, updated_at = now()
       FROM n WHERE assistant_id = $1 RETURNING ${COLUMNS.split(', ').map((c) => `agent_assistants.${c}`).join(', ')}`,
      [fields.assistant_id, fields.graph_id, fields.name, fields.description, json(fields.config), json(fields.context), json(fields.metadata)],
    );
    return rows[0]!;
  }

  async setVersion(assistantId: string, version: number): Promise<AssistantRow | undefined> {
    const rows = await this.#db.query<AssistantRow>(
      `UPDATE agent_assistants a SET version = v.version, graph_id = v.graph_id, name = v.name, description = v.description,
         config = v.config, context = v.context, metadata = v.metadata, updated_at = now()
       FROM agent_assistant_versions v WHERE a.assistant_id = $1 AND v.assistant_id = $1 AND v.version = $2
       RETURNING ${COLUMNS.split(', ').map((c) => `a.${c}`).join(', ')}`,
      [assistantId, version],
    );
    return rows[0];
  }

  async delete(assistantId: string): Promise<boolean> {
    const rows = await this.#db.query(`DELETE FROM agent_assistants WHERE assistant_id = $1 RETURNING 1`, [assistantId]);
    return rows.length > 0;
  }

  async search(filter: AssistantFilter, page: { limit: number; offset: number; sortBy?: string; sortOrder?: string }): Promise<{ rows: AssistantRow[]; total: number }> {
    const where = filterWhere(filter);
    const limit = where.param(page.limit);
    const offset = where.param(page.offset);
    const rows = await this.#db.query<AssistantRow & { total: number }>(
      `SELECT ${COLUMNS}, count(*) OVER () AS total FROM agent_assistants ${where}
       ORDER BY ${orderBy(page.sortBy, page.sortOrder, ASSISTANT_SORT, 'created_at')}, assistant_id LIMIT ${limit} OFFSET ${offset}`,
      where.params,
    );
    const total = rows[0]?.total ?? (page.offset > 0 ? await this.count(filter) : 0);
    return { rows: rows.map(({ total: _t, ...row }) => row), total };
  }

  async count(filter: AssistantFilter): Promise<number> {
    const where = filterWhere(filter);
    const rows = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM agent_assistants ${where}`, where.params);
    return rows[0]!.n;
  }

  async versions(assistantId: string, metadata: Record<string, unknown> | undefined, limit: number, offset: number): Promise<Record<string, unknown>[]> {
    const where = new Where([assistantId]);
    where.add('assistant_id = $1');
    if (metadata && Object.keys(metadata).length) where.add(`metadata @> ${where.param(json(metadata))}::jsonb`);
    return this.#db.query(
      `SELECT assistant_id, version, graph_id, name, description, config, context, metadata, created_at
         FROM agent_assistant_versions ${where} ORDER BY version DESC LIMIT ${where.param(limit)} OFFSET ${where.param(offset)}`,
      where.params,
    );
  }
}
