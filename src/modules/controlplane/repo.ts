// The only SQL of the control plane. Every query names the tenant: one workspace never sees another's rows.
import { sql, type Generated, type Kysely, type Transaction } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import type { RevisionStatus, Source } from './schemas.ts';

export interface DeploymentRow {
  id: string;
  tenant_id: string;
  name: string;
  source: Source;
  source_config: Record<string, unknown>;
  secrets: Record<string, string>;
  status: string;
  latest_revision_id: string | null;
  active_revision_id: string | null;
  image_version: string | null;
  url: string | null;
  created_at: string;
  updated_at: string;
}

export interface RevisionRow {
  id: string;
  deployment_id: string;
  tenant_id: string;
  status: RevisionStatus;
  source: Source;
  repo_ref: string | null;
  graph_config_path: string | null;
  image_uri: string | null;
  repo_commit_sha: string | null;
  pinned_commit_sha: string | null;
  remote_reconciled: boolean;
  status_message: string | null;
  created_at: string;
  updated_at: string;
}

export interface LogRow {
  seq: number;
  logged_at: string;
  level: string;
  message: string;
}

interface Tables {
  deployments: Omit<DeploymentRow, 'created_at' | 'updated_at'> & { created_at: Generated<string>; updated_at: Generated<string>; revisions_version: Generated<number> };
  revisions: Omit<RevisionRow, 'created_at' | 'updated_at'> & { seq: Generated<number>; created_at: Generated<string>; updated_at: Generated<string> };
  revision_logs: LogRow & { revision_id: string; logged_at: Generated<string> };
}

export type ControlPlaneTx = Transaction<Tables>;

export interface RevisionFilter {
  statuses?: RevisionStatus[];
  remoteReconciled?: boolean;
}

export interface DeploymentFilter {
  nameContains?: string;
  status?: string;
  remoteReconciled?: boolean;
  imageVersion?: string;
  deploymentType?: string;
  ids?: string[];
}

const REVISION_COLUMNS = [
  'id', 'deployment_id', 'tenant_id', 'status', 'source', 'repo_ref', 'graph_config_path', 'image_uri',
  'repo_commit_sha', 'pinned_commit_sha', 'remote_reconciled', 'status_message', 'created_at', 'updated_at',
] as const;

export class ControlPlaneRepo {
  readonly db: Kysely<Tables>;

  readonly #source: Db;

  constructor(db: Db) {
    this.db = db.kysely as Kysely<Tables>;
    this.#source = db;
  }

  transaction<T>(fn: (trx: ControlPlaneTx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(fn);
  }

  async insertDeployment(trx: ControlPlaneTx, row: Omit<DeploymentRow, 'created_at' | 'updated_at'>): Promise<void> {
    await trx.insertInto('deployments').values({ ...row, source_config: JSON.stringify(row.source_config) as any, secrets: JSON.stringify(row.secrets) as any }).execute();
  }

  async updateDeployment(trx: ControlPlaneTx, tenantId: string, id: string, changes: Partial<Pick<DeploymentRow, 'source_config' | 'secrets' | 'latest_revision_id' | 'active_revision_id' | 'url' | 'status'>>): Promise<void> {
    const values: Record<string, unknown> = { ...changes, updated_at: sql`now()` };
    if (changes.source_config) values.source_config = JSON.stringify(changes.source_config);
    if (changes.secrets) values.secrets = JSON.stringify(changes.secrets);
    await trx.updateTable('deployments').set(values as any).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
  }

  async getDeployment(tenantId: string, id: string, trx?: ControlPlaneTx): Promise<DeploymentRow | undefined> {
    let query = (trx ?? this.db).selectFrom('deployments').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id);
    if (trx) query = query.forUpdate();
    return query.executeTakeFirst() as Promise<DeploymentRow | undefined>;
  }

  /** Changes whenever any revision of the deployment changes; undefined when the tenant has no such deployment. */
  async revisionsVersion(tenantId: string, id: string): Promise<number | undefined> {
    const row = await this.db.selectFrom('deployments').select('revisions_version').where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
    return row?.revisions_version;
  }

  /** Calls back with the deployment id whenever one of its revisions changes (trigger NOTIFY). */
  async onRevisionsChanged(callback: (deploymentId: string) => void): Promise<void> {
    await this.#source.listen('berth_revisions', callback);
  }

  async deploymentNameTaken(tenantId: string, name: string): Promise<boolean> {
    const row = await this.db.selectFrom('deployments').select('id').where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
    return row !== undefined;
  }

  async listDeployments(tenantId: string, filter: DeploymentFilter, limit: number, offset: number): Promise<DeploymentRow[]> {
    let query = this.db.selectFrom('deployments as d').selectAll('d').where('d.tenant_id', '=', tenantId);
    if (filter.nameContains) query = query.where('d.name', 'ilike', `%${filter.nameContains.replace(/[\\%_]/g, '\\$&')}%`);
    if (filter.status) query = query.where('d.status', '=', filter.status);
    if (filter.imageVersion) query = query.where('d.image_version', '=', filter.imageVersion);
    if (filter.deploymentType) query = query.where(sql`d.source_config->>'deployment_type'`, '=', filter.deploymentType);
    if (filter.ids) query = query.where('d.id', 'in', filter.ids.length > 0 ? filter.ids : ['00000000-0000-0000-0000-000000000000']);
    if (filter.remoteReconciled !== undefined) {
      // A deployment is reconciled when a data plane has applied its latest revision.
      query = query.where((eb) => eb.exists(
        eb.selectFrom('revisions as r').select('r.id').whereRef('r.id', '=', 'd.latest_revision_id').where('r.remote_reconciled', '=', filter.remoteReconciled!),
      ));
    }
    return query.orderBy('d.created_at', 'desc').orderBy('d.id', 'desc').limit(limit).offset(offset).execute() as Promise<DeploymentRow[]>;
  }

  async deleteDeployment(tenantId: string, id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('deployments').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async insertRevision(trx: ControlPlaneTx, row: Omit<RevisionRow, 'created_at' | 'updated_at' | 'remote_reconciled' | 'status_message' | 'repo_commit_sha'>): Promise<RevisionRow> {
    return trx.insertInto('revisions').values({ ...row, repo_commit_sha: null, remote_reconciled: false, status_message: null }).returning(REVISION_COLUMNS).executeTakeFirstOrThrow() as Promise<RevisionRow>;
  }

  /** Marks every superseded in-progress revision of a deployment SKIPPED; returns their ids. */
  async skipRevisions(trx: ControlPlaneTx, deploymentId: string, statuses: readonly RevisionStatus[], message: string): Promise<string[]> {
    const rows = await trx.updateTable('revisions')
      .set({ status: 'SKIPPED', status_message: message, updated_at: sql`now()` } as any)
      .where('deployment_id', '=', deploymentId)
      .where('status', 'in', statuses as RevisionStatus[])
      .returning('id')
      .execute();
    return rows.map((row) => row.id);
  }

  async getRevision(tenantId: string, deploymentId: string, revisionId: string): Promise<RevisionRow | undefined> {
    return this.db.selectFrom('revisions').select(REVISION_COLUMNS)
      .where('tenant_id', '=', tenantId).where('deployment_id', '=', deploymentId).where('id', '=', revisionId)
      .executeTakeFirst() as Promise<RevisionRow | undefined>;
  }

  /** For background work, which acts on a revision id alone. */
  async getRevisionById(revisionId: string, trx?: ControlPlaneTx): Promise<RevisionRow | undefined> {
    return (trx ?? this.db).selectFrom('revisions').select(REVISION_COLUMNS).where('id', '=', revisionId).executeTakeFirst() as Promise<RevisionRow | undefined>;
  }

  async listRevisions(tenantId: string, deploymentId: string, filter: RevisionFilter, limit: number, offset: number): Promise<RevisionRow[]> {
    let query = this.db.selectFrom('revisions').select(REVISION_COLUMNS).where('deployment_id', '=', deploymentId).where('tenant_id', '=', tenantId);
    if (filter.statuses) query = query.where('status', 'in', filter.statuses);
    if (filter.remoteReconciled !== undefined) query = query.where('remote_reconciled', '=', filter.remoteReconciled);
    return query.orderBy('seq', 'desc').limit(limit).offset(offset).execute() as Promise<RevisionRow[]>;
  }

  async listRevisionsOfDeployments(ids: string[]): Promise<Map<string, RevisionRow>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.selectFrom('revisions').select(REVISION_COLUMNS).where('id', 'in', ids).execute() as RevisionRow[];
    return new Map(rows.map((row) => [row.id, row]));
  }

  /**
   * Moves a revision from one of `from` to `to`; false when it was not in one of them (someone else
   * moved it: superseded, interrupted, deleted). Every pipeline step goes through this check.
   */
  async transition(revisionId: string, from: readonly RevisionStatus[], to: RevisionStatus, changes: Partial<Pick<RevisionRow, 'status_message' | 'repo_commit_sha' | 'remote_reconciled'>> = {}, trx?: ControlPlaneTx): Promise<boolean> {
    const result = await (trx ?? this.db).updateTable('revisions')
      .set({ ...changes, status: to, updated_at: sql`now()` } as any)
      .where('id', '=', revisionId)
      .where('status', 'in', from as RevisionStatus[])
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async revisionsInStatus(statuses: readonly RevisionStatus[], limit: number): Promise<RevisionRow[]> {
    return this.db.selectFrom('revisions').select(REVISION_COLUMNS).where('status', 'in', statuses as RevisionStatus[]).orderBy('seq').limit(limit).execute() as Promise<RevisionRow[]>;
  }

  async appendLogs(revisionId: string, firstSeq: number, lines: { level: string; message: string }[]): Promise<void> {
    if (lines.length === 0) return;
    await this.db.insertInto('revision_logs').values(lines.map((line, index) => ({ revision_id: revisionId, seq: firstSeq + index, ...line }))).execute();
  }

  async lastLogSeq(revisionId: string): Promise<number> {
    const row = await this.db.selectFrom('revision_logs').select(sql<number>`coalesce(max(seq), -1)`.as('seq')).where('revision_id', '=', revisionId).executeTakeFirst();
    return Number(row?.seq ?? -1);
  }

  async readLogs(revisionId: string, options: { offset: number; limit: number; order: 'asc' | 'desc'; level?: string; query?: string }): Promise<LogRow[]> {
    let query = this.db.selectFrom('revision_logs').select(['seq', 'logged_at', 'level', 'message']).where('revision_id', '=', revisionId);
    if (options.level) query = query.where('level', '=', options.level.toLowerCase());
    if (options.query) query = query.where('message', 'ilike', `%${options.query.replace(/[\\%_]/g, '\\$&')}%`);
    return query.orderBy('seq', options.order).limit(options.limit).offset(options.offset).execute();
  }
}
