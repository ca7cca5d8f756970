// Deployments and revisions: the rules of the control plane, free of HTTP.
import { randomUUID } from 'node:crypto';
import { AppError, badRequest, conflict, InputValidationError, notFound } from '../../platform/errors.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { ValidationIssue } from '../../platform/http/validation/pydantic.ts';
import { ControlPlaneRepo, type ControlPlaneTx, type DeploymentFilter, type DeploymentRow, type RevisionFilter, type RevisionRow } from './repo.ts';
import {
  FINAL_REVISION_STATUSES, SOURCE_ALIASES, SUPERSEDABLE_REVISION_STATUSES,
  type DeploymentCreateRequest, type DeploymentPatchRequest, type Source, type SourceConfig,
} from './schemas.ts';
import { checkRequiredOnCreate, checkSecretNames, checkSourceFields, checkTagRef, IMMUTABLE_SOURCE_CONFIG, valueError } from './rules.ts';
import type { RevisionVersions } from './revision-versions.ts';
import { deploymentView, revisionView, type DeploymentView, type RevisionView } from './views.ts';

/** Hands a new revision to the pipeline inside the transaction that created it. */
export interface RevisionScheduler {
  schedule(trx: ControlPlaneTx, revisionId: string): Promise<void>;
}

/** The trace store's projects, seen from the control plane: a deployment traces into a project of its name. */
export interface TracingProjects {
  /** Creates the project of this name unless it exists. */
  ensure(tenantId: string, name: string): Promise<void>;
  /** Deletes the project of this name, with its runs, if there is one. */
  deleteByName(tenantId: string, name: string): Promise<void>;
}

export const deploymentNotFound = (id: string) => notFound(`Deployment ID ${id} not found.`);
export const revisionNotFound = (id: string) => notFound(`Revision ID ${id} not found.`);

function normalizeSource(source: string): Source {
  return SOURCE_ALIASES[source] ?? (source as Source);
}

/** Drops nulls and absent keys, so stored configuration holds only what was said. */
function compact<T extends object>(value: T | null | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(value ?? {}).filter(([, v]) => v !== null && v !== undefined)) as Partial<T>;
}

export interface RevisionConfig {
  repo_ref: string | null;
  graph_config_path: string | null;
  image_uri: string | null;
  pinned_commit_sha: string | null;
}

export class ControlPlaneService {
  readonly #repo: ControlPlaneRepo;
  readonly #secrets: SecretBox;
  readonly #scheduler: RevisionScheduler;
  readonly #projects: TracingProjects;
  readonly #versions: RevisionVersions;

  constructor(repo: ControlPlaneRepo, secrets: SecretBox, scheduler: RevisionScheduler, projects: TracingProjects, versions: RevisionVersions) {
    this.#repo = repo;
    this.#versions = versions;
    this.#secrets = secrets;
    this.#scheduler = scheduler;
    this.#projects = projects;
  }

  #sealSecrets(secrets: { name: string; value: string }[]): Record<string, string> {
    return Object.fromEntries(secrets.map((secret) => [secret.name, this.#secrets.seal(secret.value)]));
  }

  /** Decrypted secrets of a deployment, for the data plane that runs it; never for API answers. */
  openSecrets(deployment: DeploymentRow): Record<string, string> {
    return Object.fromEntries(Object.entries(deployment.secrets).map(([name, sealed]) => [name, this.#secrets.open(sealed)]));
  }

  async create(tenantId: string, input: DeploymentCreateRequest): Promise<DeploymentView> {
    const source = normalizeSource(input.source);
    const issues: ValidationIssue[] = [];
    checkSourceFields(source, input.source_config, input.source_revision_config, issues);
    checkRequiredOnCreate(source, input.source_config, input.source_revision_config, issues);
    checkTagRef(input.source_revision_config.repo_ref, input.source_config.build_on_push, issues);
    checkSecretNames(input.secrets, issues);
    if (issues.length > 0) throw new InputValidationError(issues);
    if (await this.#repo.deploymentNameTaken(tenantId, input.name)) {
      throw conflict(`A deployment named '${input.name}' already exists in this workspace.`);
    }
    const id = randomUUID();
    const revisionConfig: RevisionConfig = {
      repo_ref: input.source_revision_config.repo_ref ?? null,
      graph_config_path: input.source_revision_config.graph_config_path ?? null,
      image_uri: input.source_revision_config.image_uri ?? null,
      pinned_commit_sha: null,
    };
    await this.#repo.transaction(async (trx) => {
      await this.#repo.insertDeployment(trx, {
        id, tenant_id: tenantId, name: input.name, source, source_config: compact(input.source_config),
        secrets: this.#sealSecrets(input.secrets), status: 'READY', latest_revision_id: null,
        active_revision_id: null, image_version: null, url: null,
      });
      await this.#newRevision(trx, tenantId, id, source, revisionConfig);
    });
    await this.#projects.ensure(tenantId, input.name);
    return this.get(tenantId, id);
  }

  async #newRevision(trx: ControlPlaneTx, tenantId: string, deploymentId: string, source: Source, config: RevisionConfig): Promise<RevisionRow> {
    const revisionId = randomUUID();
    await this.#repo.skipRevisions(trx, deploymentId, SUPERSEDABLE_REVISION_STATUSES, `Superseded by revision ${revisionId}.`);
    const revision = await this.#repo.insertRevision(trx, { id: revisionId, deployment_id: deploymentId, tenant_id: tenantId, status: 'CREATING', source, ...config });
    await this.#repo.updateDeployment(trx, tenantId, deploymentId, { latest_revision_id: revisionId });
    await this.#scheduler.schedule(trx, revisionId);
    return revision;
  }

  async #deploymentOr404(tenantId: string, id: string): Promise<DeploymentRow> {
    const deployment = await this.#repo.getDeployment(tenantId, id);
    if (!deployment) throw deploymentNotFound(id);
    return deployment;
  }

  async get(tenantId: string, id: string): Promise<DeploymentView> {
    const deployment = await this.#deploymentOr404(tenantId, id);
    const latest = deployment.latest_revision_id ? await this.#repo.getRevisionById(deployment.latest_revision_id) : undefined;
    return deploymentView(deployment, latest);
  }

  async list(tenantId: string, filter: DeploymentFilter, limit: number, offset: number): Promise<{ resources: DeploymentView[]; offset: number }> {
    const rows = await this.#repo.listDeployments(tenantId, filter, limit, offset);
    const latest = await this.#repo.listRevisionsOfDeployments(rows.flatMap((row) => (row.latest_revision_id ? [row.latest_revision_id] : [])));
    return {
      resources: rows.map((row) => deploymentView(row, row.latest_revision_id ? latest.get(row.latest_revision_id) : undefined)),
      offset: offset + rows.length,
    };
  }

  async patch(tenantId: string, id: string, input: DeploymentPatchRequest): Promise<DeploymentView> {
    await this.#repo.transaction(async (trx) => {
      const deployment = await this.#repo.getDeployment(tenantId, id, trx);
      if (!deployment) throw deploymentNotFound(id);
      const issues: ValidationIssue[] = [];
      if (input.revision_source && normalizeSource(input.revision_source) !== deployment.source) {
        issues.push(valueError(['body', 'revision_source'], `source cannot be changed from ${deployment.source}`, input.revision_source));
      }
      checkSourceFields(deployment.source, input.source_config, input.source_revision_config, issues);
      checkSecretNames(input.secrets, issues);
      const current = deployment.source_config as SourceConfig;
      for (const field of IMMUTABLE_SOURCE_CONFIG) {
        const next = input.source_config?.[field];
        if (next !== undefined && next !== null && JSON.stringify(next) !== JSON.stringify(current[field] ?? null)) {
          issues.push(valueError(['body', 'source_config', field], `${field} cannot be changed after the deployment is created`, next));
        }
      }
      const latest = deployment.latest_revision_id ? await this.#repo.getRevisionById(deployment.latest_revision_id, trx) : undefined;
      const sourceConfig = { ...current, ...compact(input.source_config) } as SourceConfig;
      const revisionInput = input.source_revision_config ?? {};
      checkTagRef(revisionInput.repo_ref ?? latest?.repo_ref, sourceConfig.build_on_push, issues);
      if (issues.length > 0) throw new InputValidationError(issues);

      const changes: Parameters<ControlPlaneRepo['updateDeployment']>[3] = { source_config: sourceConfig };
      if (input.secrets) changes.secrets = this.#sealSecrets(input.secrets);
      await this.#repo.updateDeployment(trx, tenantId, id, changes);

      const createsRevision = Boolean(revisionInput.repo_ref || revisionInput.graph_config_path || revisionInput.image_uri || input.secrets || input.source_config?.resource_spec);
      if (createsRevision) {
        await this.#newRevision(trx, tenantId, id, deployment.source, {
          repo_ref: revisionInput.repo_ref ?? latest?.repo_ref ?? null,
          graph_config_path: revisionInput.graph_config_path ?? latest?.graph_config_path ?? null,
          image_uri: revisionInput.image_uri ?? latest?.image_uri ?? null,
          pinned_commit_sha: null,
        });
      }
    });
    return this.get(tenantId, id);
  }

  async delete(tenantId: string, id: string, options: { deleteTracingProject: boolean }): Promise<void> {
    const deployment = await this.#deploymentOr404(tenantId, id);
    if (!(await this.#repo.deleteDeployment(tenantId, id))) throw deploymentNotFound(id);
    if (options.deleteTracingProject) await this.#projects.deleteByName(tenantId, deployment.name);
  }

  /**
   * Deletes each deployment exactly as delete() does, one after another (each id once); one that cannot be
   * deleted (unknown, or another workspace's) is a failure with the error delete() gave, and the rest go on.
   */
  async deleteMany(tenantId: string, ids: string[], options: { deleteTracingProject: boolean }): Promise<{ deleted: string[]; failed: { id: string; error: AppError }[] }> {
    const deleted: string[] = [];
    const failed: { id: string; error: AppError }[] = [];
    for (const id of new Set(ids)) {
      try {
        await this.delete(tenantId, id, options);
        deleted.push(id);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        failed.push({ id, error });
      }
    }
    return { deleted, failed };
  }

  /** A number that changes with every change to the deployment's revisions (for caching pages); 404 if not the tenant's. */
  async revisionsVersion(tenantId: string, deploymentId: string): Promise<number> {
    const version = await this.#versions.get(tenantId, deploymentId);
    if (version === undefined) throw deploymentNotFound(deploymentId);
    return version;
  }

  async listRevisions(tenantId: string, deploymentId: string, filter: RevisionFilter, limit: number, offset: number): Promise<{ resources: RevisionView[]; offset: number }> {
    const rows = await this.#repo.listRevisions(tenantId, deploymentId, filter, limit, offset);
    // An empty page is also what a missing (or foreign) deployment looks like: only then ask which.
    if (rows.length === 0) await this.#deploymentOr404(tenantId, deploymentId);
    return { resources: rows.map(revisionView), offset: offset + rows.length };
  }

  async #revisionOr404(tenantId: string, deploymentId: string, revisionId: string): Promise<RevisionRow> {
    const revision = await this.#repo.getRevision(tenantId, deploymentId, revisionId);
    if (revision) return revision;
    await this.#deploymentOr404(tenantId, deploymentId);
    throw revisionNotFound(revisionId);
  }

  async getRevision(tenantId: string, deploymentId: string, revisionId: string): Promise<RevisionView> {
    return revisionView(await this.#revisionOr404(tenantId, deploymentId, revisionId));
  }

  /** A new revision with the configuration (and, for git, the exact commit) of an older one: rollback. */
  async redeploy(tenantId: string, deploymentId: string, revisionId: string): Promise<DeploymentView> {
    const revision = await this.#revisionOr404(tenantId, deploymentId, revisionId);
    await this.#repo.transaction(async (trx) => {
      const deployment = await this.#repo.getDeployment(tenantId, deploymentId, trx);
      if (!deployment) throw deploymentNotFound(deploymentId);
      await this.#newRevision(trx, tenantId, deploymentId, deployment.source, {
        repo_ref: revision.repo_ref,
        graph_config_path: revision.graph_config_path,
        image_uri: revision.image_uri,
        pinned_commit_sha: revision.repo_commit_sha ?? revision.pinned_commit_sha,
      });
    });
    return this.get(tenantId, deploymentId);
  }

  /** Stops a revision stuck in progress; its build, if running, is killed by the pipeline. */
  async interrupt(tenantId: string, deploymentId: string, revisionId: string): Promise<RevisionView> {
    const revision = await this.#revisionOr404(tenantId, deploymentId, revisionId);
    if (FINAL_REVISION_STATUSES.has(revision.status)) {
      throw badRequest(`Revision ID ${revisionId} is already ${revision.status} and cannot be interrupted.`);
    }
    // If it reached a final state meanwhile, that state stands and is what the caller sees.
    await this.#repo.transition(revisionId, [...SUPERSEDABLE_REVISION_STATUSES, 'DEPLOYING'], 'INTERRUPTED', { status_message: 'Interrupted by request.' });
    return this.getRevision(tenantId, deploymentId, revisionId);
  }

  async readLogs(tenantId: string, deploymentId: string, revisionId: string, options: { offset: number; limit: number; order: 'asc' | 'desc'; level?: string | null; query?: string | null }) {
    await this.#revisionOr404(tenantId, deploymentId, revisionId);
    const rows = await this.#repo.readLogs(revisionId, { ...options, level: options.level ?? undefined, query: options.query ?? undefined });
    return {
      logs: rows.map((row) => ({ timestamp: row.logged_at, level: row.level.toUpperCase(), message: row.message })),
      next_offset: rows.length === options.limit ? options.offset + rows.length : null,
    };
  }
}
