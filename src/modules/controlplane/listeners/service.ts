// Listeners: the self-hosted data planes of a workspace, free of HTTP.
import { randomUUID } from 'node:crypto';
import { conflict, notFound } from '../../../platform/errors.ts';
import type { ListenerComputeConfig, ListenerCreateRequest, ListenerPatchRequest } from '../schemas.ts';
import type { ListenerRepo, ListenerRow } from './repo.ts';

export interface ListenerView {
  version: string | null;
  compute_type: 'k8s';
  compute_id: string;
  compute_config: { k8s_namespaces: string[] | null };
  id: string;
  created_at: string;
  updated_at: string;
}

export const listenerNotFound = (id: string) => notFound(`Listener ID ${id} not found.`);

/** Only the fields of the compute type are kept (pydantic ignores unknown ones). */
function computeConfig(config: ListenerComputeConfig): { k8s_namespaces: string[] | null } {
  return { k8s_namespaces: config.k8s_namespaces ?? null };
}

function listenerView(row: ListenerRow): ListenerView {
  return {
    version: row.version,
    compute_type: row.compute_type,
    compute_id: row.compute_id,
    compute_config: computeConfig(row.compute_config),
    id: row.id,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export class ListenerService {
  readonly #repo: ListenerRepo;

  constructor(repo: ListenerRepo) {
    this.#repo = repo;
  }

  async create(tenantId: string, input: ListenerCreateRequest): Promise<ListenerView> {
    const row = await this.#repo.insert({
      id: randomUUID(), tenant_id: tenantId, compute_type: input.compute_type, compute_id: input.compute_id,
      compute_config: computeConfig(input.compute_config), version: input.version ?? null,
    });
    if (!row) throw conflict(`Listener for LangSmith workspace ID '${tenantId}' and compute ID '${input.compute_id}' already exists.`);
    return listenerView(row);
  }

  async get(tenantId: string, id: string): Promise<ListenerView> {
    const row = await this.#repo.get(tenantId, id);
    if (!row) throw listenerNotFound(id);
    return listenerView(row);
  }

  async list(tenantId: string, limit: number, offset: number): Promise<{ resources: ListenerView[]; offset: number }> {
    const rows = await this.#repo.list(tenantId, limit, offset);
    return { resources: rows.map(listenerView), offset: offset + rows.length };
  }

  /** As on deployments, an absent or null field is left as it is; compute_type and compute_id never change. */
  async patch(tenantId: string, id: string, input: ListenerPatchRequest): Promise<ListenerView> {
    const changes: Parameters<ListenerRepo['update']>[2] = {};
    if (input.version != null) changes.version = input.version;
    if (input.compute_config != null) changes.compute_config = computeConfig(input.compute_config);
    if (Object.keys(changes).length === 0) return this.get(tenantId, id);
    const row = await this.#repo.update(tenantId, id, changes);
    if (!row) throw listenerNotFound(id);
    return listenerView(row);
  }

  async delete(tenantId: string, id: string): Promise<void> {
    if (!(await this.#repo.delete(tenantId, id))) throw listenerNotFound(id);
  }
}
