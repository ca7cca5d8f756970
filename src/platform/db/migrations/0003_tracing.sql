-- Trace store: tracing projects (sessions), runs, run attachments, feedback.

CREATE TABLE tracer_sessions (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text,
  extra jsonb,
  reference_dataset_id uuid,
  start_time timestamptz NOT NULL DEFAULT now(),
  end_time timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- Projects are found by name on every ingest ("created on first use"): one per name per workspace.
CREATE UNIQUE INDEX tracer_sessions_tenant_name ON tracer_sessions (tenant_id, name);
-- Target of the runs foreign key, so that deleting a project finds its runs through runs_tenant_session_start.
CREATE UNIQUE INDEX tracer_sessions_tenant_id ON tracer_sessions (tenant_id, id);

-- One row per run id; a post and a patch of the same id are merged into it in either order.
-- The filter compiler (modules/tracing/filter) targets these column names and types.
CREATE TABLE runs (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  session_id uuid NOT NULL,
  trace_id uuid NOT NULL,
  parent_run_id uuid,
  -- ancestors, root first (derived from dotted_order)
  parent_run_ids uuid[] NOT NULL DEFAULT '{}',
  dotted_order text NOT NULL,
  is_root boolean GENERATED ALWAYS AS (parent_run_id IS NULL) STORED,
  name text NOT NULL,
  run_type text NOT NULL,
  status text GENERATED ALWAYS AS (
    CASE WHEN error IS NOT NULL THEN 'error' WHEN end_time IS NOT NULL THEN 'success' ELSE 'pending' END
  ) STORED,
  start_time timestamptz NOT NULL,
  end_time timestamptz,
  inputs jsonb,
  outputs jsonb,
  error text,
  extra jsonb,
  events jsonb,
  tags text[] NOT NULL DEFAULT '{}',
  serialized jsonb,
  reference_example_id uuid,
  trace_tier text,
  total_tokens bigint,
  prompt_tokens bigint,
  completion_tokens bigint,
  total_cost numeric,
  prompt_cost numeric,
  completion_cost numeric,
  first_token_time timestamptz,
  -- attachment names and mime types; the bytes are in run_attachments
  attachments jsonb,
  -- a patch has been applied: its fields win over a post that arrives later
  patched boolean NOT NULL DEFAULT false,
  -- a post has been applied (a patch may arrive first and create the row)
  posted boolean NOT NULL DEFAULT false,
  received_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, session_id) REFERENCES tracer_sessions (tenant_id, id) ON DELETE CASCADE
);
-- The query and export paths: one project, a start_time range, keyset (start_time, id).
CREATE INDEX runs_tenant_session_start ON runs (tenant_id, session_id, start_time, id);
CREATE INDEX runs_tenant_trace ON runs (tenant_id, trace_id, dotted_order);
CREATE INDEX runs_tenant_parent ON runs (tenant_id, parent_run_id) WHERE parent_run_id IS NOT NULL;

CREATE TABLE run_attachments (
  tenant_id uuid NOT NULL,
  run_id uuid NOT NULL,
  name text NOT NULL,
  mime_type text NOT NULL,
  content bytea NOT NULL,
  PRIMARY KEY (tenant_id, run_id, name),
  FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, id) ON DELETE CASCADE
);

-- Feedback may arrive before its run has been flushed by the SDK, so it does not reference runs;
-- deleting a project deletes the feedback of its runs explicitly.
CREATE TABLE feedback (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  run_id uuid NOT NULL,
  session_id uuid,
  key text NOT NULL,
  score double precision,
  value jsonb,
  comment text,
  correction jsonb,
  feedback_source jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  modified_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX feedback_tenant_run ON feedback (tenant_id, run_id, key);
