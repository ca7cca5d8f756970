-- Listeners: the self-hosted data planes of a workspace, one per compute (e.g. a Kubernetes cluster that
-- the workspace names by its compute_id). A compute has one listener per workspace.
CREATE TABLE listeners (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  compute_type text NOT NULL,
  compute_id text NOT NULL,
  compute_config jsonb NOT NULL,
  version text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX listeners_tenant_compute ON listeners (tenant_id, compute_id);
CREATE INDEX listeners_tenant_created ON listeners (tenant_id, created_at DESC, id DESC);
