-- Organizations own workspaces (tenants); API keys belong to an organization and,
-- unless organization-scoped, to one workspace.
CREATE TABLE organizations (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE workspaces (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX workspaces_organization ON workspaces (organization_id);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  -- sha256 of the key: keys are long random strings, so a fast hash is enough and keeps auth cheap.
  key_hash bytea NOT NULL UNIQUE,
  -- first characters, so people can tell keys apart without the secret
  key_prefix text NOT NULL,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  -- NULL: organization-scoped key, which must name its workspace with X-Tenant-Id
  workspace_id uuid REFERENCES workspaces (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('admin', 'member')),
  description text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
