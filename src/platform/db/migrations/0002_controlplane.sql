CREATE TABLE deployments (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name text NOT NULL,
  source text NOT NULL,
  source_config jsonb NOT NULL,
  -- {name: ciphertext}; values are never returned
  secrets jsonb NOT NULL DEFAULT '{}',
  status text NOT NULL,
  latest_revision_id uuid,
  active_revision_id uuid,
  image_version text,
  url text,
  -- bumped by a trigger on every change to the deployment's revisions: readers cache revision pages by it
  revisions_version bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX deployments_tenant_created ON deployments (tenant_id, created_at DESC, id DESC);
CREATE UNIQUE INDEX deployments_tenant_name ON deployments (tenant_id, name);

CREATE TABLE revisions (
  id uuid PRIMARY KEY,
  -- creation order within the server; newest-first listing follows it exactly
  seq bigint GENERATED ALWAYS AS IDENTITY,
  deployment_id uuid NOT NULL REFERENCES deployments (id) ON DELETE CASCADE,
  tenant_id uuid NOT NULL,
  status text NOT NULL,
  source text NOT NULL,
  repo_ref text,
  graph_config_path text,
  image_uri text,
  repo_commit_sha text,
  -- set when this revision was created by redeploying an older one: build exactly that commit
  pinned_commit_sha text,
  remote_reconciled boolean NOT NULL DEFAULT false,
  status_message text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX revisions_deployment_seq ON revisions (deployment_id, seq DESC);
CREATE INDEX revisions_deployment_status_seq ON revisions (deployment_id, status, seq DESC);

-- A trigger, not application code, so that no path that changes a revision can forget to bump it.
CREATE FUNCTION berth_bump_revisions_version() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed uuid := CASE WHEN TG_OP = 'DELETE' THEN OLD.deployment_id ELSE NEW.deployment_id END;
BEGIN
  UPDATE deployments SET revisions_version = revisions_version + 1 WHERE id = changed;
  PERFORM pg_notify('berth_revisions', changed::text);
  RETURN NULL;
END $$;
CREATE TRIGGER revisions_bump_version AFTER INSERT OR UPDATE OR DELETE ON revisions
  FOR EACH ROW EXECUTE FUNCTION berth_bump_revisions_version();

CREATE TABLE revision_logs (
  revision_id uuid NOT NULL REFERENCES revisions (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  logged_at timestamptz NOT NULL DEFAULT now(),
  level text NOT NULL,
  message text NOT NULL,
  PRIMARY KEY (revision_id, seq)
);
