// The revisions version of a deployment (see the trigger in migration 0002), which keys cached revision
// pages. On PostgreSQL it is read per request: other processes change revisions too. On the embedded engine
// one process owns the database and PGlite delivers the trigger's NOTIFY before the changing statement
// returns, so a version remembered here is exact until a notification forgets it: no read at all.
import type { ControlPlaneRepo } from './repo.ts';

export class RevisionVersions {
  readonly #repo: ControlPlaneRepo;
  readonly #exact: boolean;
  readonly #known = new Map<string, { tenantId: string; version: number }>();
  /** Bumped by every change, so a read that raced a change is not remembered. */
  readonly #changes = new Map<string, number>();

  constructor(repo: ControlPlaneRepo, notificationsAreSynchronous: boolean) {
    this.#repo = repo;
    this.#exact = notificationsAreSynchronous;
  }

  async start(): Promise<void> {
    if (this.#exact) await this.#repo.onRevisionsChanged((deploymentId) => this.#changed(deploymentId));
  }

  /** The version, or undefined when the tenant has no such deployment. */
  async get(tenantId: string, deploymentId: string): Promise<number | undefined> {
    const known = this.#known.get(deploymentId);
    if (known && known.tenantId === tenantId) return known.version;
    const changesBefore = this.#changes.get(deploymentId) ?? 0;
    const version = await this.#repo.revisionsVersion(tenantId, deploymentId);
    if (this.#exact && version !== undefined && (this.#changes.get(deploymentId) ?? 0) === changesBefore) {
      this.#known.set(deploymentId, { tenantId, version });
    }
    return version;
  }

  #changed(deploymentId: string): void {
    this.#known.delete(deploymentId);
    this.#changes.set(deploymentId, (this.#changes.get(deploymentId) ?? 0) + 1);
  }
}
