-- Agent server: assistants, threads, runs (the durable run queue), checkpoints, store, crons.
-- One agent server (one deployment) owns the schema it runs in: the schema is its tenant boundary.

CREATE TABLE agent_assistants (
  assistant_id uuid PRIMARY KEY,
  graph_id text NOT NULL,
  name text NOT NULL,
  description text,
  config jsonb NOT NULL DEFAULT '{}',
  context jsonb NOT NULL DEFAULT '{}',
  metadata jsonb NOT NULL DEFAULT '{}',
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_assistants_graph ON agent_assistants (graph_id);

CREATE TABLE agent_assistant_versions (
  assistant_id uuid NOT NULL REFERENCES agent_assistants (assistant_id) ON DELETE CASCADE,
  version integer NOT NULL,
  graph_id text NOT NULL,
  name text NOT NULL,
  description text,
  config jsonb NOT NULL DEFAULT '{}',
  context jsonb NOT NULL DEFAULT '{}',
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (assistant_id, version)
);

CREATE TABLE agent_threads (
  thread_id uuid PRIMARY KEY,
  metadata jsonb NOT NULL DEFAULT '{}',
  status text NOT NULL DEFAULT 'idle',
  -- json, not jsonb: written after every run and rarely searched, so it is stored as text without conversion
  "values" json,
  interrupts jsonb NOT NULL DEFAULT '{}',
  config jsonb NOT NULL DEFAULT '{}',
  error jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  state_updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_threads_created ON agent_threads (created_at DESC);

CREATE TABLE agent_runs (
  run_id uuid PRIMARY KEY,
  thread_id uuid NOT NULL,
  assistant_id uuid NOT NULL,
  status text NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}',
  kwargs jsonb NOT NULL,
  multitask_strategy text NOT NULL DEFAULT 'reject',
  -- the queue: a pending run becomes claimable at available_at; a running one is owned until lease_expires_at
  available_at timestamptz NOT NULL DEFAULT now(),
  attempt integer NOT NULL DEFAULT 0,
  worker_id text,
  lease_expires_at timestamptz,
  -- set by a cancel request: interrupt | rollback
  cancel_action text,
  webhook text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_runs_thread ON agent_runs (thread_id, created_at);
CREATE INDEX agent_runs_pending ON agent_runs (available_at, created_at) WHERE status = 'pending';
CREATE INDEX agent_runs_running ON agent_runs (lease_expires_at) WHERE status = 'running';

-- Event log of runs created with stream_resumable, replayed after Last-Event-ID.
CREATE TABLE agent_run_events (
  run_id uuid NOT NULL,
  seq integer NOT NULL,
  event text NOT NULL,
  data text NOT NULL,
  PRIMARY KEY (run_id, seq)
);

CREATE TABLE agent_checkpoints (
  thread_id text NOT NULL,
  checkpoint_ns text NOT NULL DEFAULT '',
  checkpoint_id text NOT NULL,
  parent_checkpoint_id text,
  -- serializer type; the value is the serialized text for "json", base64 otherwise (text is much
  -- cheaper than bytea on the embedded engine)
  type text NOT NULL,
  checkpoint text NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);

CREATE TABLE agent_checkpoint_writes (
  thread_id text NOT NULL,
  checkpoint_ns text NOT NULL DEFAULT '',
  checkpoint_id text NOT NULL,
  task_id text NOT NULL,
  idx integer NOT NULL,
  channel text NOT NULL,
  type text NOT NULL,
  value text NOT NULL,
  task_path text NOT NULL DEFAULT '',
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);

CREATE TABLE agent_store_items (
  -- the namespace joined with '.', for prefix matching; labels cannot contain '.'
  prefix text NOT NULL,
  key text NOT NULL,
  namespace text[] NOT NULL,
  value jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  ttl_minutes double precision,
  expires_at timestamptz,
  PRIMARY KEY (prefix, key)
);
CREATE INDEX agent_store_items_expires ON agent_store_items (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE agent_crons (
  cron_id uuid PRIMARY KEY,
  assistant_id uuid NOT NULL,
  thread_id uuid,
  schedule text NOT NULL,
  timezone text,
  payload jsonb NOT NULL DEFAULT '{}',
  metadata jsonb NOT NULL DEFAULT '{}',
  user_id text,
  enabled boolean NOT NULL DEFAULT true,
  on_run_completed text,
  end_time timestamptz,
  next_run_date timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_crons_due ON agent_crons (next_run_date) WHERE enabled;

-- At most one running run per thread: a second claim on the same thread fails instead of running twice.
CREATE UNIQUE INDEX agent_runs_one_running ON agent_runs (thread_id) WHERE status = 'running';
