// Assistants: configured instances of a graph, versioned. Every assistant_id also accepts a graph id
// (the graph's system assistant).
import { randomUUID } from 'node:crypto';
import { conflict, notFound } from '../../platform/errors.ts';
import type { Db } from '../../platform/db/index.ts';
import { GraphRegistry, systemAssistantId } from './graphs.ts';
import { AssistantRepo, type AssistantFilter, type AssistantRow } from './repo/assistants.ts';
import { inTransaction } from './repo/sql.ts';

export interface AssistantCreate {
  assistant_id?: string;
  graph_id: string;
  config?: Record<string, unknown>;
  context?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  if_exists?: 'raise' | 'do_nothing';
  name?: string;
  description?: string | null;
}

export interface AssistantPatch {
  graph_id?: string;
  config?: Record<string, unknown>;
  context?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  name?: string;
  description?: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class AssistantService {
  readonly repo: AssistantRepo;
  readonly #db: Db;
  readonly #registry: GraphRegistry;
  /** Assistants change rarely and every run reads one: a short cache keeps the read off the hot path. */
  readonly #cache = new Map<string, { row: AssistantRow; at: number }>();

  constructor(db: Db, registry: GraphRegistry) {
    this.#db = db;
    this.repo = new AssistantRepo(db);
    this.#registry = registry;
  }

  /** Creates (or keeps) the system assistant of every graph, with the default config given by the environment. */
  async registerSystemAssistants(defaults: Record<string, Record<string, unknown>>, descriptions: Record<string, string | undefined>): Promise<void> {
    for (const graphId of this.#registry.ids()) {
      const { context, ...config } = (defaults[graphId] ?? {}) as { context?: Record<string, unknown> };
      await this.repo.insert({
        assistant_id: systemAssistantId(graphId),
        graph_id: graphId,
        name: graphId,
        description: descriptions[graphId] ?? null,
        config,
        context: context ?? {},
        metadata: { created_by: 'system' },
      });
    }
  }

  /** An assistant id or a graph id → the assistant's id. */
  resolveId(idOrGraph: string): string {
    if (this.#registry.has(idOrGraph)) return systemAssistantId(idOrGraph);
    return idOrGraph;
  }

  async get(idOrGraph: string): Promise<AssistantRow> {
    const id = this.resolveId(idOrGraph);
    const row = UUID.test(id) ? await this.repo.get(id) : undefined;
    if (!row) throw notFound(`Assistant "${idOrGraph}" not found`);
    return row;
  }

  /** For runs: a cached read (a few seconds stale at most; patches in this process clear it). */
  async getForRun(idOrGraph: string): Promise<AssistantRow> {
    const id = this.resolveId(idOrGraph);
    const hit = this.#cache.get(id);
    if (hit && Date.now() - hit.at < 2000) return hit.row;
    const row = UUID.test(id) ? await this.repo.get(id) : undefined;
    if (!row) {
      throw notFound(`No assistant found for "${idOrGraph}". Make sure the assistant ID is for a valid assistant or a valid graph ID.`);
    }
    this.#cache.set(id, { row, at: Date.now() });
    return row;
  }

  #assertGraph(graphId: string): void {
    if (!this.#registry.has(graphId)) throw notFound(`Graph "${graphId}" not found`);
  }

  async create(input: AssistantCreate): Promise<AssistantRow> {
    this.#assertGraph(input.graph_id);
    const id = input.assistant_id ?? randomUUID();
    const created = await this.repo.insert({
      assistant_id: id,
      graph_id: input.graph_id,
      name: input.name ?? 'Untitled',
      description: input.description ?? null,
      config: input.config ?? {},
      context: input.context ?? {},
      metadata: input.metadata ?? {},
    });
    if (created) return created;
    if (input.if_exists === 'do_nothing') return (await this.repo.get(id))!;
    throw conflict('Assistant already exists');
  }

  async patch(idOrGraph: string, patch: AssistantPatch): Promise<AssistantRow> {
    const id = this.resolveId(idOrGraph);
    if (patch.graph_id !== undefined) this.#assertGraph(patch.graph_id);
    this.#cache.delete(id);
    return inTransaction(this.#db, async (tx) => {
      const current = UUID.test(id) ? await this.repo.lock(id, tx) : undefined;
      if (!current) throw notFound(`Assistant "${idOrGraph}" not found`);
      return this.repo.addVersion({
        assistant_id: id,
        graph_id: patch.graph_id ?? current.graph_id,
        name: patch.name ?? current.name,
        description: patch.description !== undefined ? patch.description : current.description,
        config: patch.config ?? current.config,
        context: patch.context ?? current.context,
        metadata: { ...current.metadata, ...patch.metadata },
      }, tx);
    });
  }

  async delete(idOrGraph: string): Promise<void> {
    const id = this.resolveId(idOrGraph);
    this.#cache.delete(id);
    if (!UUID.test(id) || !(await this.repo.delete(id))) throw notFound(`Assistant "${idOrGraph}" not found`);
  }

  async setLatest(idOrGraph: string, version: number): Promise<AssistantRow> {
    const id = this.resolveId(idOrGraph);
    this.#cache.delete(id);
    const row = UUID.test(id) ? await this.repo.setVersion(id, version) : undefined;
    if (!row) throw notFound(`Assistant "${idOrGraph}" version ${version} not found`);
    return row;
  }

  async versions(idOrGraph: string, metadata: Record<string, unknown> | undefined, limit: number, offset: number) {
    const row = await this.get(idOrGraph);
    return this.repo.versions(row.assistant_id, metadata, limit, offset);
  }

  search(filter: AssistantFilter, page: { limit: number; offset: number; sortBy?: string; sortOrder?: string }) {
    return this.repo.search(filter, page);
  }

  count(filter: AssistantFilter) {
    return this.repo.count(filter);
  }
}
