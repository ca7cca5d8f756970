// The seam between the control plane and whatever runs agent servers (a data plane).
// The control plane builds a revision up to AWAITING_DEPLOY; a data plane then takes it, reports
// DEPLOYING, and finally DEPLOYED (with the URL where its agent server answers) or DEPLOY_FAILED.
// A local data plane (agent-server processes on this machine) and remote ones (over HTTP: list
// revisions with remote_reconciled=false, report through POST …/revisions/{id}/deploy-status) use
// the same reports.
import { badRequest } from '../../platform/errors.ts';
import type { ControlPlaneRepo } from './repo.ts';
import { revisionNotFound } from './service.ts';
import type { RevisionStatus } from './schemas.ts';
import { revisionView, type RevisionView } from './views.ts';

export type DeployReportStatus = 'DEPLOYING' | 'DEPLOYED' | 'DEPLOY_FAILED';

export interface DeployReport {
  status: DeployReportStatus;
  /** Where the deployed agent server answers (DEPLOYED). */
  url?: string | null;
  message?: string | null;
}

/** What a data plane driver is given: revisions to run and a way to report on them. */
export interface DataPlaneReports {
  /** Revisions built (or with an image) and not yet taken by any data plane, oldest first. */
  pending(limit: number): Promise<RevisionView[]>;
  report(tenantId: string, deploymentId: string, revisionId: string, report: DeployReport): Promise<RevisionView>;
}

/** A data plane that runs revisions somewhere; started by the composition root. */
export interface DataPlaneDriver {
  readonly name: string;
  start(reports: DataPlaneReports): Promise<void>;
  stop(): Promise<void>;
}

const ALLOWED_FROM: Record<DeployReportStatus, readonly RevisionStatus[]> = {
  DEPLOYING: ['AWAITING_DEPLOY'],
  DEPLOYED: ['AWAITING_DEPLOY', 'DEPLOYING'],
  DEPLOY_FAILED: ['AWAITING_DEPLOY', 'DEPLOYING'],
};

export class DataPlaneReportService implements DataPlaneReports {
  readonly #repo: ControlPlaneRepo;

  constructor(repo: ControlPlaneRepo) {
    this.#repo = repo;
  }

  async pending(limit: number): Promise<RevisionView[]> {
    return (await this.#repo.revisionsInStatus(['AWAITING_DEPLOY'], limit)).filter((row) => !row.remote_reconciled).map(revisionView);
  }

  async report(tenantId: string, deploymentId: string, revisionId: string, report: DeployReport): Promise<RevisionView> {
    const revision = await this.#repo.getRevision(tenantId, deploymentId, revisionId);
    if (!revision) throw revisionNotFound(revisionId);
    await this.#repo.transaction(async (trx) => {
      const moved = await this.#repo.transition(revisionId, ALLOWED_FROM[report.status], report.status, {
        remote_reconciled: true,
        status_message: report.message ?? null,
      }, trx);
      if (!moved) throw badRequest(`Revision ID ${revisionId} is ${revision.status}; it cannot become ${report.status}.`);
      if (report.status === 'DEPLOYED') {
        await this.#repo.updateDeployment(trx, tenantId, deploymentId, { active_revision_id: revisionId, url: report.url ?? null });
      }
    });
    return revisionView((await this.#repo.getRevision(tenantId, deploymentId, revisionId))!);
  }
}
