/**
 * The trace store's tables as the filter compiler targets them. Tests create these; the real migration, owned
 * by the trace store, must keep the same columns and types.
 */
export const RUNS_TABLE_DDL = `CREATE TABLE runs (
  tenant_id uuid NOT NULL, id uuid NOT NULL, session_id uuid NOT NULL, trace_id uuid NOT NULL,
  parent_run_id uuid, parent_run_ids uuid[] NOT NULL DEFAULT '{}', dotted_order text NOT NULL, is_root boolean NOT NULL,
  name text NOT NULL, run_type text NOT NULL, status text NOT NULL,
  start_time timestamptz NOT NULL, end_time timestamptz,
  inputs jsonb, outputs jsonb, error text, extra jsonb, events jsonb, tags text[] NOT NULL DEFAULT '{}',
  reference_example_id uuid, trace_tier text,
  total_tokens bigint, prompt_tokens bigint, completion_tokens bigint,
  total_cost numeric, prompt_cost numeric, completion_cost numeric, first_token_time timestamptz,
  PRIMARY KEY (tenant_id, id)
);`;

export const FEEDBACK_TABLE_DDL = `CREATE TABLE feedback (
  tenant_id uuid NOT NULL, id uuid NOT NULL, run_id uuid NOT NULL, key text NOT NULL,
  score double precision, value jsonb, comment text, created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);`;
