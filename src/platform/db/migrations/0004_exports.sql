-- Bulk export: destinations, exports, export runs (one per UTC day partition).

CREATE TABLE bulk_export_destinations (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  display_name text NOT NULL,
  destination_type text NOT NULL,
  -- {bucket_name, prefix, region, endpoint_url, include_bucket_in_prefix}
  config jsonb NOT NULL,
  -- SecretBox-sealed JSON of the credentials; NULL means the environment's default credential chain
  credentials_sealed text,
  credentials_keys text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX bulk_export_destinations_tenant ON bulk_export_destinations (tenant_id, created_at DESC, id DESC);

CREATE TABLE bulk_exports (
  id uuid PRIMARY KEY,
  -- creation order: the FIFO order in which queued exports get workers
  seq bigint GENERATED ALWAYS AS IDENTITY,
  tenant_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  bulk_export_destination_id uuid NOT NULL REFERENCES bulk_export_destinations (id),
  session_id uuid NOT NULL,
  start_time timestamptz NOT NULL,
  end_time timestamptz,
  filter text,
  format text NOT NULL,
  format_version text NOT NULL,
  compression text NOT NULL,
  interval_hours integer,
  export_fields text[],
  source_bulk_export_id uuid REFERENCES bulk_exports (id),
  status text NOT NULL,
  -- work may not begin before this (spawned exports: end_time + 10 minutes)
  not_before timestamptz NOT NULL,
  -- first time a run of it was claimed; the workflow timeout counts from here
  started_at timestamptz,
  -- scheduled exports: start of the next window to spawn
  next_window_start timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX bulk_exports_tenant ON bulk_exports (tenant_id, created_at DESC, id DESC);
CREATE INDEX bulk_exports_active ON bulk_exports (status, seq) WHERE status IN ('CREATED', 'RUNNING');
-- The scheduler can never spawn the same window twice, whatever the number of processes.
CREATE UNIQUE INDEX bulk_exports_spawned_window ON bulk_exports (source_bulk_export_id, start_time) WHERE source_bulk_export_id IS NOT NULL;

CREATE TABLE bulk_export_runs (
  id uuid PRIMARY KEY,
  bulk_export_id uuid NOT NULL REFERENCES bulk_exports (id) ON DELETE CASCADE,
  tenant_id uuid NOT NULL,
  status text NOT NULL,
  -- the partition: [start_time, end_time) within one UTC day
  start_time timestamptz NOT NULL,
  end_time timestamptz NOT NULL,
  -- the folder its files go to (key prefix inside the bucket)
  prefix text NOT NULL,
  retry_number integer NOT NULL DEFAULT 0,
  errors jsonb NOT NULL DEFAULT '{}',
  -- checkpoint, committed after every file
  rows_written bigint NOT NULL DEFAULT 0,
  exported_files text[] NOT NULL DEFAULT '{}',
  latest_cursor jsonb,
  -- the multipart upload of the file being written, aborted when the run resumes elsewhere
  pending_upload jsonb,
  -- scheduling: not before available_at (retry delay); owned while lease_expires_at is in the future
  available_at timestamptz NOT NULL,
  lease_owner text,
  lease_expires_at timestamptz,
  attempt_started_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX bulk_export_runs_export ON bulk_export_runs (bulk_export_id, start_time);
CREATE INDEX bulk_export_runs_pending ON bulk_export_runs (available_at) WHERE status IN ('CREATED', 'RUNNING');
CREATE INDEX bulk_export_runs_leased ON bulk_export_runs (tenant_id, bulk_export_id) WHERE lease_owner IS NOT NULL;
