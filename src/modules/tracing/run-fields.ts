// The run fields Berth returns, and the SQL that reads each one from the runs table. Shared by the run
// query API and the RunScanner that bulk export uses, so both answer with the same value types.
import { sql, type RawBuilder } from 'kysely';

/** The spec's "Exportable fields", in its order. */
export const EXPORTABLE_FIELDS: readonly string[] = Object.freeze([
  'id', 'tenant_id', 'session_id', 'trace_id', 'parent_run_id', 'parent_run_ids', 'reference_example_id', 'name', 'run_type', 'start_time',
  'end_time', 'status', 'is_root', 'dotted_order', 'trace_tier', 'inputs', 'outputs', 'error', 'extra', 'events', 'tags', 'feedback_stats',
  'total_tokens', 'prompt_tokens', 'completion_tokens', 'total_cost', 'prompt_cost', 'completion_cost', 'first_token_time',
]);

/** Fields the run query API offers beyond the exportable ones (the SDK's listRuns selects app_path and thread_id). */
export const QUERYABLE_FIELDS: readonly string[] = Object.freeze([...EXPORTABLE_FIELDS, 'serialized', 'attachments', 'latency', 'app_path', 'thread_id']);

/**
 * The SQL expression of one field over the runs table aliased `alias`. Costs come back as float8 (numbers, not
 * numeric strings); uuid[] as text[] so both engines hand over plain string arrays.
 */
export function fieldExpression(field: string, alias: string): RawBuilder<unknown> {
  const col = (name: string) => sql.ref(`${alias}.${name}`);
  switch (field) {
    case 'parent_run_ids':
      return sql`${col('parent_run_ids')}::text[]`;
    case 'total_cost':
    case 'prompt_cost':
    case 'completion_cost':
      return sql`${col(field)}::float8`;
    case 'latency':
      // The JS SDK's start_time carries an execution counter in its microseconds, so a run that ends in the
      // millisecond it started can look a few microseconds long "backwards".
      return sql`greatest(extract(epoch from (${col('end_time')} - ${col('start_time')})), 0)::float8`;
    case 'app_path':
      return sql`'/o/' || ${col('tenant_id')} || '/projects/p/' || ${col('session_id')} || '/r/' || ${col('id')} || '?trace_id=' || ${col('trace_id')}`;
    case 'thread_id':
      return sql`COALESCE(${col('extra')}->'metadata'->>'thread_id', ${col('extra')}->'metadata'->>'session_id', ${col('extra')}->'metadata'->>'conversation_id')`;
    case 'feedback_stats':
      return feedbackStats(alias);
    default:
      if (!QUERYABLE_FIELDS.includes(field)) throw new TypeError(`unknown run field ${JSON.stringify(field)}`);
      return col(field);
  }
}

/** {"<key>": {"n": count, "avg": mean score}} over the run's feedback, or null when it has none. */
function feedbackStats(alias: string): RawBuilder<unknown> {
  return sql`(SELECT jsonb_object_agg(fs.key, jsonb_build_object('n', fs.n, 'avg', fs.avg))
    FROM (SELECT f.key, count(*) AS n, avg(f.score) AS avg FROM feedback f
          WHERE f.tenant_id = ${sql.ref(`${alias}.tenant_id`)} AND f.run_id = ${sql.ref(`${alias}.id`)} GROUP BY f.key) fs)`;
}

/** `SELECT` list for the given fields, each aliased to its field name. */
export function selectList(fields: readonly string[], alias: string): RawBuilder<unknown> {
  return sql.join(fields.map((field) => sql`${fieldExpression(field, alias)} AS ${sql.ref(field)}`));
}
