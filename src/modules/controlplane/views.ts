// What the API answers: the stored rows in the public shapes (neutral names, secrets by name only).
import type { DeploymentRow, RevisionRow } from './repo.ts';
import type { RevisionStatus, Source } from './schemas.ts';

export interface SourceRevisionConfigView {
  repo_ref: string | null;
  graph_config_path: string | null;
  image_uri: string | null;
  repo_commit_sha: string | null;
}

export interface RevisionView {
  id: string;
  deployment_id: string;
  created_at: string;
  updated_at: string;
  status: RevisionStatus;
  source: Source;
  source_revision_config: SourceRevisionConfigView;
  remote_reconciled: boolean;
  status_message: string | null;
}

export interface DeploymentView {
  name: string;
  source: Source;
  source_config: Record<string, unknown>;
  source_revision_config: SourceRevisionConfigView;
  secrets: { name: string }[];
  id: string;
  tenant_id: string;
  created_at: string;
  updated_at: string;
  status: string;
  latest_revision_id: string | null;
  active_revision_id: string | null;
  image_version: string | null;
  url: string | null;
}

function sourceRevisionConfig(revision: RevisionRow | undefined): SourceRevisionConfigView {
  return {
    repo_ref: revision?.repo_ref ?? null,
    graph_config_path: revision?.graph_config_path ?? null,
    image_uri: revision?.image_uri ?? null,
    repo_commit_sha: revision?.repo_commit_sha ?? null,
  };
}

export function revisionView(row: RevisionRow): RevisionView {
  return {
    id: row.id,
    deployment_id: row.deployment_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    status: row.status,
    source: row.source,
    source_revision_config: sourceRevisionConfig(row),
    remote_reconciled: row.remote_reconciled,
    status_message: row.status_message,
  };
}

export function deploymentView(row: DeploymentRow, latest: RevisionRow | undefined): DeploymentView {
  return {
    name: row.name,
    source: row.source,
    source_config: row.source_config,
    source_revision_config: sourceRevisionConfig(latest),
    secrets: Object.keys(row.secrets).sort().map((name) => ({ name })),
    id: row.id,
    tenant_id: row.tenant_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    status: row.status,
    latest_revision_id: row.latest_revision_id,
    active_revision_id: row.active_revision_id,
    image_version: row.image_version,
    url: row.url,
  };
}
