// The SQL of run ingestion: one statement upserts a whole batch, merging each operation into the stored
// run by (tenant_id, id) so that a post and a patch of the same run combine whatever order they arrive in.
import { CompiledQuery } from 'kysely';
import { prepared, type Db } from '../../platform/db/index.ts';
import type { RunValues } from './ingest/run-op.ts';

/** One run's merged operations of one request, ready to write. */
export interface RunWrite {
  values: RunValues;
  sessionId: string;
  posted: boolean;
  patched: boolean;
  attachments?: { name: string; mimeType: string; content: Buffer }[];
}

/** Columns read from the batch document, with their types. */
const COLUMNS: readonly [string, string][] = [
  ['id', 'uuid'], ['session_id', 'uuid'], ['trace_id', 'uuid'], ['parent_run_id', 'uuid'], ['parent_run_ids', 'uuid[]'],
  ['dotted_order', 'text'], ['name', 'text'], ['run_type', 'text'], ['start_time', 'timestamptz'], ['end_time', 'timestamptz'],
  ['inputs', 'jsonb'], ['outputs', 'jsonb'], ['error', 'text'], ['extra', 'jsonb'], ['events', 'jsonb'], ['tags', 'text[]'],
  ['serialized', 'jsonb'], ['reference_example_id', 'uuid'], ['trace_tier', 'text'], ['total_tokens', 'bigint'],
  ['prompt_tokens', 'bigint'], ['completion_tokens', 'bigint'], ['total_cost', 'numeric'], ['prompt_cost', 'numeric'],
  ['completion_cost', 'numeric'], ['first_token_time', 'timestamptz'], ['attachments', 'jsonb'], ['posted', 'boolean'], ['patched', 'boolean'],
];

/** Fields a post defines; a later patch fills them only while no post has arrived. */
const POST_OWNED = ['session_id', 'trace_id', 'parent_run_id', 'parent_run_ids', 'dotted_order', 'start_time', 'inputs', 'serialized', 'reference_example_id', 'trace_tier'];
/** Fields a patch defines (the end of the run); a post that arrives after a patch does not undo them. */
const PATCH_OWNED = ['end_time', 'outputs', 'error', 'events', 'first_token_time', 'total_tokens', 'prompt_tokens', 'completion_tokens', 'total_cost', 'prompt_cost', 'completion_cost'];

const RECORD_TYPE = COLUMNS.map(([name, type]) => `${name} ${type}`).join(', ');
const INSERT_COLUMNS = ['tenant_id', ...COLUMNS.map(([name]) => name)];
const SELECT_VALUES = COLUMNS.map(([name]) => {
  switch (name) {
    case 'name':
    case 'run_type':
      // A patch may create the row before its post; the post fills these in.
      return `COALESCE(b.${name}, '')`;
    case 'tags':
    case 'parent_run_ids':
      return `COALESCE(b.${name}, '{}')`;
    default:
      return `b.${name}`;
  }
});
const UPDATES = [
  ...POST_OWNED.map((f) => `${f} = CASE WHEN EXCLUDED.posted OR NOT runs.posted THEN COALESCE(EXCLUDED.${f}, runs.${f}) ELSE runs.${f} END`),
  ...['name', 'run_type'].map((f) => `${f} = CASE WHEN EXCLUDED.posted OR NOT runs.posted THEN COALESCE(NULLIF(EXCLUDED.${f}, ''), runs.${f}) ELSE runs.${f} END`),
  ...PATCH_OWNED.map((f) => `${f} = CASE WHEN EXCLUDED.patched OR NOT runs.patched THEN COALESCE(EXCLUDED.${f}, runs.${f}) ELSE COALESCE(runs.${f}, EXCLUDED.${f}) END`),
  `tags = CASE WHEN cardinality(EXCLUDED.tags) = 0 THEN runs.tags WHEN cardinality(runs.tags) = 0 OR EXCLUDED.patched OR NOT runs.patched THEN EXCLUDED.tags ELSE runs.tags END`,
  // Top-level keys of extra merge; a patch's keys win over a post's, whichever arrived first.
  `extra = CASE WHEN EXCLUDED.extra IS NULL THEN runs.extra WHEN runs.extra IS NULL THEN EXCLUDED.extra
     WHEN EXCLUDED.patched THEN runs.extra || EXCLUDED.extra ELSE EXCLUDED.extra || runs.extra END`,
  `attachments = CASE WHEN EXCLUDED.attachments IS NULL THEN runs.attachments ELSE COALESCE(runs.attachments, '{}'::jsonb) || EXCLUDED.attachments END`,
  'posted = runs.posted OR EXCLUDED.posted',
  'patched = runs.patched OR EXCLUDED.patched',
  'updated_at = now()',
];

const UPSERT_SQL = `INSERT INTO runs (${INSERT_COLUMNS.join(', ')})
  SELECT $1::uuid, ${SELECT_VALUES.join(', ')} FROM jsonb_to_recordset($2::jsonb) AS b(${RECORD_TYPE})
  ON CONFLICT (tenant_id, id) DO UPDATE SET ${UPDATES.join(',\n    ')}`;

/**
 * PostgreSQL's jsonb and text reject NUL characters and unpaired surrogates that JSON.stringify happily
 * emits as escapes; they become U+FFFD rather than failing the whole batch.
 */
export function pgSafeJson(text: string): string {
  if (!text.includes('\\u0000') && !/\\ud[89a-f]/i.test(text)) return text;
  return text.replace(/(\\+)u([0-9a-fA-F]{4})(\\+u[dD][c-fC-F][0-9a-fA-F]{2})?/g, (match, slashes: string, code: string, low: string | undefined) => {
    // An even run of backslashes is an escaped backslash followed by plain text "uXXXX".
    if (slashes.length % 2 === 0) return match;
    const value = parseInt(code, 16);
    const prefix = slashes.slice(1);
    if (value === 0) return `${prefix}\\ufffd${low ?? ''}`;
    if (value >= 0xd800 && value <= 0xdbff) return low && low.length - low.replace(/^\\+/, '').length === 1 ? match : `${prefix}\\ufffd${low ?? ''}`;
    if (value >= 0xdc00 && value <= 0xdfff) return `${prefix}\\ufffd${low ?? ''}`;
    return match;
  });
}

export class RunsRepo {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Upserts the runs (each id at most once) and stores their attachments, in one transaction. */
  async upsert(tenantId: string, writes: readonly RunWrite[]): Promise<void> {
    if (writes.length === 0) return;
    // Rows are locked in id order, so two concurrent batches that share runs (a post in one, its patch in
    // the other) cannot deadlock on PostgreSQL.
    const ordered = [...writes].sort((a, b) => (a.values.id < b.values.id ? -1 : a.values.id > b.values.id ? 1 : 0));
    const document = pgSafeJson(JSON.stringify(ordered.map(toRecord)));
    const withAttachments = writes.filter((write) => write.attachments && write.attachments.length > 0);
    if (withAttachments.length === 0) {
      await this.#db.query(prepared(UPSERT_SQL), [tenantId, document]);
      return;
    }
    await this.#db.kysely.transaction().execute(async (trx) => {
      await trx.executeQuery(CompiledQuery.raw(UPSERT_SQL, [tenantId, document]));
      for (const write of withAttachments) {
        for (const file of write.attachments!) {
          await trx.executeQuery(CompiledQuery.raw(
            `INSERT INTO run_attachments (tenant_id, run_id, name, mime_type, content) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (tenant_id, run_id, name) DO UPDATE SET mime_type = EXCLUDED.mime_type, content = EXCLUDED.content`,
            [tenantId, write.values.id, file.name, file.mimeType, file.content],
          ));
        }
      }
    });
  }

  /** Stored lineage of runs: for patches without dotted_order, and children whose parent is stored. */
  async lineage(tenantId: string, ids: readonly string[]): Promise<Map<string, { session_id: string; trace_id: string; dotted_order: string; parent_run_ids: string[]; start_time: string }>> {
    if (ids.length === 0) return new Map();
    const rows = await this.#db.query<{ id: string; session_id: string; trace_id: string; dotted_order: string; parent_run_ids: string[]; start_time: string }>(
      'SELECT id, session_id, trace_id, dotted_order, parent_run_ids::text[] AS parent_run_ids, start_time FROM runs WHERE tenant_id = $1 AND id = ANY($2::uuid[])',
      [tenantId, ids],
    );
    return new Map(rows.map((row) => [row.id, row]));
  }
}

function toRecord(write: RunWrite): Record<string, unknown> {
  const record: Record<string, unknown> = { ...write.values, session_id: write.sessionId, posted: write.posted, patched: write.patched };
  if (write.attachments && write.attachments.length > 0) {
    record.attachments = Object.fromEntries(write.attachments.map((file) => [file.name, { mime_type: file.mimeType, size: file.content.length }]));
  }
  return record;
}
