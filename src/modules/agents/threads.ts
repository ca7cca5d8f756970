// Threads and their state (read through the graph from Berth's checkpointer).
import { randomUUID } from 'node:crypto';
import { badRequest, conflict, notFound } from '../../platform/errors.ts';
import type { Db } from '../../platform/db/index.ts';
import type { DbCheckpointSaver } from './checkpointer.ts';
import type { GraphRegistry, RunnableGraph } from './graphs.ts';
import { serialize } from './run-stream.ts';
import { inTransaction } from './repo/sql.ts';
import { ThreadRepo, type ThreadFilter, type ThreadRow } from './repo/threads.ts';
import { errorBody, threadStateOf } from './run-worker.ts';

export interface ThreadCreate {
  thread_id?: string;
  metadata?: Record<string, unknown>;
  if_exists?: 'raise' | 'do_nothing';
  supersteps?: { updates: { values?: unknown; command?: unknown; as_node: string }[] }[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function checkpointOf(config: any): Record<string, unknown> | null {
  const c = config?.configurable;
  if (!c?.thread_id || !c.checkpoint_id) return null;
  return { thread_id: c.thread_id, checkpoint_ns: c.checkpoint_ns || '', checkpoint_id: c.checkpoint_id, checkpoint_map: c.checkpoint_map ?? null };
}

/** A LangGraph StateSnapshot in the agent server's ThreadState shape. */
export function toThreadState(snapshot: any): Record<string, unknown> {
  return JSON.parse(serialize({
    values: snapshot.values ?? {},
    next: snapshot.next ?? [],
    tasks: (snapshot.tasks ?? []).map((task: any) => ({
      id: task.id,
      name: task.name,
      path: task.path,
      error: task.error != null ? errorBody(task.error).message : null,
      interrupts: task.interrupts ?? [],
      checkpoint: task.state?.configurable ?? null,
      state: task.state && 'values' in task.state ? toThreadState(task.state) : null,
      result: task.result ?? null,
    })),
    metadata: snapshot.metadata ?? {},
    created_at: snapshot.createdAt ?? null,
    checkpoint: checkpointOf(snapshot.config),
    parent_checkpoint: checkpointOf(snapshot.parentConfig),
    checkpoint_id: snapshot.config?.configurable?.checkpoint_id ?? null,
    parent_checkpoint_id: snapshot.parentConfig?.configurable?.checkpoint_id ?? null,
  }));
}

function emptyState(threadId: string): Record<string, unknown> {
  return { values: {}, next: [], tasks: [], metadata: {}, created_at: null, checkpoint: { thread_id: threadId, checkpoint_ns: '', checkpoint_id: null, checkpoint_map: null }, parent_checkpoint: null, checkpoint_id: null, parent_checkpoint_id: null };
}

export class ThreadService {
  readonly repo: ThreadRepo;
  readonly #db: Db;
  readonly #registry: GraphRegistry;
  readonly #checkpointer: DbCheckpointSaver;

  constructor(db: Db, registry: GraphRegistry, checkpointer: DbCheckpointSaver) {
    this.#db = db;
    this.repo = new ThreadRepo(db);
    this.#registry = registry;
    this.#checkpointer = checkpointer;
  }

  async create(input: ThreadCreate): Promise<ThreadRow> {
    const id = input.thread_id ?? randomUUID();
    const created = await this.repo.insert(id, input.metadata ?? {});
    if (!created) {
      if (input.if_exists === 'do_nothing') return (await this.repo.get(id))!;
      throw conflict('Thread already exists');
    }
    if (input.supersteps?.length) {
      const graphId = input.metadata?.graph_id;
      if (typeof graphId !== 'string' || !this.#registry.has(graphId)) {
        await this.repo.delete(id);
        throw badRequest(`Thread ${id} has no graph ID: set metadata.graph_id to apply supersteps`);
      }
      const graph = await this.#graph(graphId);
      let config: Record<string, unknown> = { configurable: { thread_id: id } };
      for (const step of input.supersteps) {
        for (const update of step.updates) {
          config = await graph.updateState(config, update.values ?? update.command ?? null, update.as_node);
        }
      }
      await this.#recordState(id, graph);
      return (await this.repo.get(id))!;
    }
    return created;
  }

  async get(threadId: string): Promise<ThreadRow> {
    const row = UUID.test(threadId) ? await this.repo.get(threadId) : undefined;
    if (!row) throw notFound(`Thread with ID ${threadId} not found`);
    return row;
  }

  async patch(threadId: string, metadata: Record<string, unknown>): Promise<ThreadRow> {
    const row = UUID.test(threadId) ? await this.repo.mergeMetadata(threadId, metadata) : undefined;
    if (!row) throw notFound(`Thread with ID ${threadId} not found`);
    return row;
  }

  async delete(threadId: string): Promise<void> {
    if (!UUID.test(threadId) || !(await this.repo.delete(threadId))) throw notFound(`Thread with ID ${threadId} not found`);
    await this.#checkpointer.deleteThread(threadId);
  }

  search(filter: ThreadFilter, page: { limit: number; offset: number; sortBy?: string; sortOrder?: string }) {
    return this.repo.search(filter, page);
  }

  count(filter: ThreadFilter) {
    return this.repo.count(filter);
  }

  async copy(threadId: string): Promise<ThreadRow> {
    await this.get(threadId);
    const newId = randomUUID();
    const row = await inTransaction(this.#db, (tx) => this.repo.copy(threadId, newId, tx));
    await this.#checkpointer.copyThread(threadId, newId);
    return row!;
  }

  async prune(threadIds: string[], strategy: 'delete' | 'keep_latest'): Promise<number> {
    let pruned = 0;
    for (const threadId of threadIds) {
      if (!UUID.test(threadId)) continue;
      if (strategy === 'delete') {
        if (await this.repo.delete(threadId)) {
          await this.#checkpointer.deleteThread(threadId);
          pruned++;
        }
      } else if (await this.repo.get(threadId)) {
        await this.#checkpointer.keepLatest(threadId);
        pruned++;
      }
    }
    return pruned;
  }

  async #graph(graphId: string): Promise<RunnableGraph> {
    return this.#registry.get(graphId, { configurable: {} }, { checkpointer: true });
  }

  async #graphOf(thread: ThreadRow): Promise<RunnableGraph | undefined> {
    const graphId = thread.metadata.graph_id;
    if (typeof graphId !== 'string' || !this.#registry.has(graphId)) return undefined;
    return this.#graph(graphId);
  }

  async state(threadId: string, options: { subgraphs?: boolean; checkpoint?: Record<string, unknown> } = {}): Promise<Record<string, unknown>> {
    const thread = await this.get(threadId);
    const graph = await this.#graphOf(thread);
    if (!graph) return emptyState(threadId);
    const config = { configurable: { ...options.checkpoint, thread_id: threadId } };
    const snapshot = await graph.getState(config, { subgraphs: options.subgraphs ?? false });
    return toThreadState(snapshot);
  }

  async history(threadId: string, options: { limit: number; before?: unknown; metadata?: Record<string, unknown>; checkpoint?: Record<string, unknown> }): Promise<Record<string, unknown>[]> {
    const thread = await this.get(threadId);
    const graph = await this.#graphOf(thread);
    if (!graph) return [];
    const before = typeof options.before === 'string'
      ? { configurable: { checkpoint_id: options.before } }
      : (options.before && typeof options.before === 'object' ? { configurable: options.before } : undefined);
    const states: Record<string, unknown>[] = [];
    const config = { configurable: { checkpoint_ns: '', ...options.checkpoint, thread_id: threadId } };
    for await (const snapshot of graph.getStateHistory(config, { limit: options.limit, before, filter: options.metadata })) {
      states.push(toThreadState(snapshot));
    }
    return states;
  }

  async updateState(threadId: string, input: { values?: unknown; as_node?: string; checkpoint_id?: string; checkpoint?: Record<string, unknown> }): Promise<Record<string, unknown>> {
    const thread = await this.get(threadId);
    const graph = await this.#graphOf(thread);
    if (!graph) throw badRequest(`Thread ${threadId} has no graph ID`);
    if (thread.status === 'busy') throw conflict('Thread is busy');
    const configurable: Record<string, unknown> = { ...input.checkpoint, thread_id: threadId };
    if (input.checkpoint_id) configurable.checkpoint_id = input.checkpoint_id;
    const next = await graph.updateState({ configurable }, input.values ?? null, input.as_node);
    await this.#recordState(threadId, graph);
    return { checkpoint: checkpointOf(next) ?? next.configurable };
  }

  async patchState(threadId: string, metadata: Record<string, unknown>): Promise<void> {
    await this.get(threadId);
    await this.#db.query(
      `UPDATE agent_checkpoints SET metadata = metadata || $2::jsonb
        WHERE thread_id = $1 AND checkpoint_ns = '' AND checkpoint_id = (SELECT max(checkpoint_id) FROM agent_checkpoints WHERE thread_id = $1 AND checkpoint_ns = '')`,
      [threadId, JSON.stringify(metadata)],
    );
  }

  async #recordState(threadId: string, graph: RunnableGraph): Promise<void> {
    const state = await threadStateOf(graph, threadId);
    await this.repo.setState(threadId, { values: state.values, interrupts: state.interrupts, status: state.next.length ? 'interrupted' : 'idle' });
  }
}
