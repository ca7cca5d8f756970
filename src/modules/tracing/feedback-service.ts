// Feedback on runs: the source of feedback_stats and of the feedback_key / feedback_score filters.
// Feedback may name a run the SDK has not flushed yet, so the run need not exist when it arrives.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../platform/db/index.ts';
import { conflict, notFound } from '../../platform/errors.ts';

export interface FeedbackCreate {
  id?: string | null;
  run_id: string;
  key: string;
  score?: number | boolean | null;
  value?: unknown;
  comment?: string | null;
  correction?: unknown;
  feedback_source?: unknown;
  session_id?: string | null;
}

export interface FeedbackRow {
  id: string;
  run_id: string;
  session_id: string | null;
  key: string;
  score: number | null;
  value: unknown;
  comment: string | null;
  correction: unknown;
  feedback_source: unknown;
  created_at: string;
  modified_at: string;
}

const COLUMNS = 'id, run_id, session_id, key, score, value, comment, correction, feedback_source, created_at, modified_at';

function json(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

export class FeedbackService {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async create(tenantId: string, body: FeedbackCreate): Promise<FeedbackRow> {
    const score = typeof body.score === 'boolean' ? (body.score ? 1 : 0) : (body.score ?? null);
    const rows = await this.#db.query<FeedbackRow>(
      `INSERT INTO feedback (tenant_id, id, run_id, session_id, key, score, value, comment, correction, feedback_source)
       VALUES ($1, $2, $3, COALESCE($4, (SELECT session_id FROM runs WHERE tenant_id = $1 AND id = $3)), $5, $6, $7, $8, $9, $10)
       ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
      [tenantId, body.id ?? randomUUID(), body.run_id, body.session_id ?? null, body.key, score, json(body.value), body.comment ?? null, json(body.correction), json(body.feedback_source)],
    );
    if (!rows[0]) throw conflict(`Feedback ${body.id} already exists`);
    return rows[0];
  }

  async get(tenantId: string, id: string): Promise<FeedbackRow> {
    const rows = await this.#db.query<FeedbackRow>(`SELECT ${COLUMNS} FROM feedback WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
    if (!rows[0]) throw notFound(`Feedback ${id} not found`);
    return rows[0];
  }

  async list(tenantId: string, runIds: string[] | undefined, keys: string[] | undefined, limit: number, offset: number): Promise<FeedbackRow[]> {
    return this.#db.query<FeedbackRow>(
      `SELECT ${COLUMNS} FROM feedback WHERE tenant_id = $1 AND ($2::uuid[] IS NULL OR run_id = ANY($2::uuid[])) AND ($3::text[] IS NULL OR key = ANY($3::text[]))
       ORDER BY created_at DESC, id LIMIT $4 OFFSET $5`,
      [tenantId, runIds ?? null, keys ?? null, limit, offset],
    );
  }

  async delete(tenantId: string, id: string): Promise<void> {
    const rows = await this.#db.query<{ id: string }>('DELETE FROM feedback WHERE tenant_id = $1 AND id = $2 RETURNING id', [tenantId, id]);
    if (!rows[0]) throw notFound(`Feedback ${id} not found`);
  }
}
