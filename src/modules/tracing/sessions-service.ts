// Tracing projects: created explicitly or on first use by name; deleting one deletes its runs.
import { badRequest, conflict, notFound } from '../../platform/errors.ts';
import type { SessionFields, SessionListFilter, SessionRow, SessionsRepo } from './sessions-repo.ts';

export class SessionsService {
  readonly #repo: SessionsRepo;
  readonly #onDelete: () => void;

  constructor(repo: SessionsRepo, onDelete: () => void) {
    this.#repo = repo;
    this.#onDelete = onDelete;
  }

  /** With upsert, an existing project of that name is updated with the given fields and returned. */
  async create(tenantId: string, fields: SessionFields & { name: string; id?: string }, upsert: boolean): Promise<SessionRow> {
    if (fields.name.trim() === '') throw badRequest('Project name must not be empty');
    const created = await this.#repo.create(tenantId, fields);
    if (created) return created;
    const existing = await this.#repo.getByName(tenantId, fields.name);
    if (!upsert || !existing) throw conflict(`Project ${fields.name} already exists`);
    const { name: _name, id: _id, ...rest } = fields;
    const updated = await this.#repo.update(tenantId, existing.id, rest);
    if (!updated || updated === 'conflict') throw conflict(`Project ${fields.name} already exists`);
    return updated;
  }

  async get(tenantId: string, id: string): Promise<SessionRow> {
    const row = await this.#repo.get(tenantId, id);
    if (!row) throw notFound(`Project ${id} not found`);
    return row;
  }

  list(tenantId: string, filter: SessionListFilter, limit: number, offset: number): Promise<SessionRow[]> {
    return this.#repo.list(tenantId, filter, limit, offset);
  }

  async update(tenantId: string, id: string, fields: SessionFields): Promise<SessionRow> {
    if (fields.name !== undefined && fields.name.trim() === '') throw badRequest('Project name must not be empty');
    const row = await this.#repo.update(tenantId, id, fields);
    if (row === 'conflict') throw conflict(`Project ${fields.name} already exists`);
    if (!row) throw notFound(`Project ${id} not found`);
    return row;
  }

  async delete(tenantId: string, id: string): Promise<void> {
    const deleted = await this.#repo.delete(tenantId, id);
    this.#onDelete();
    if (!deleted) throw notFound(`Project ${id} not found`);
  }
}
