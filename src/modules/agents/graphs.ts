// Loads the graphs langgraph.json names: compiled graphs, uncompiled StateGraphs and factories
// (functions of the run's config), from TypeScript or JavaScript files of the user's project.
import { stat } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { uuid5 } from '@langchain/langgraph-checkpoint';
import type { BaseCheckpointSaver, BaseStore } from '@langchain/langgraph-checkpoint';
import { GraphConfigError, type GraphSpec } from './graph-config.ts';

/** The namespace of system assistant ids: the same UUIDv5 as the official servers give a graph. */
const NAMESPACE_GRAPH = '6ba7b821-9dad-11d1-80b4-00c04fd430c8';

export function systemAssistantId(graphId: string): string {
  return uuid5(graphId, NAMESPACE_GRAPH);
}

/** A compiled LangGraph graph (Pregel), typed loosely: it comes from the user's copy of the library. */
export type RunnableGraph = {
  stream(input: unknown, options: Record<string, unknown>): Promise<AsyncIterable<unknown>>;
  streamEvents(input: unknown, options: Record<string, unknown>): AsyncIterable<any>;
  getState(config: Record<string, unknown>, options?: Record<string, unknown>): Promise<any>;
  getStateHistory(config: Record<string, unknown>, options?: Record<string, unknown>): AsyncIterable<any>;
  updateState(config: Record<string, unknown>, values: unknown, asNode?: string): Promise<any>;
  getGraphAsync(config?: Record<string, unknown>): Promise<{ toJSON(): unknown }>;
  getSubgraphsAsync?(namespace?: string, recurse?: boolean): AsyncIterable<[string, RunnableGraph]>;
  checkpointer?: unknown;
  store?: unknown;
  builder?: unknown;
  [key: string]: unknown;
};

type Resolved = { kind: 'graph'; graph: RunnableGraph } | { kind: 'factory'; factory: (config: unknown) => Promise<unknown> | unknown };

function isUncompiled(value: any): boolean {
  return typeof value === 'object' && value !== null && typeof value.compile === 'function' && typeof value.invoke !== 'function';
}

function finish(value: any): RunnableGraph {
  const graph = isUncompiled(value) ? value.compile() : value;
  // createAgent-style wrappers expose their compiled graph as `.graph`.
  if (graph && typeof graph.stream !== 'function' && graph.graph) return graph.graph;
  return graph;
}

function isGraph(value: any): value is RunnableGraph {
  return typeof value === 'object' && value !== null && typeof value.stream === 'function' && typeof value.getState === 'function';
}

export interface GraphPersistence {
  checkpointer: BaseCheckpointSaver;
  store: BaseStore;
}

export class GraphRegistry {
  readonly #specs = new Map<string, GraphSpec>();
  readonly #resolved = new Map<string, Resolved>();
  readonly #bound = new Map<string, RunnableGraph>();
  readonly #persistence: GraphPersistence;

  private constructor(persistence: GraphPersistence) {
    this.#persistence = persistence;
  }

  /** Imports every graph file; the first failure stops start-up with the file and export named. */
  static async load(specs: GraphSpec[], persistence: GraphPersistence): Promise<GraphRegistry> {
    const registry = new GraphRegistry(persistence);
    for (const spec of specs) {
      const where = `graph "${spec.graphId}" (${spec.file}, export "${spec.exportName}")`;
      try {
        await stat(spec.file);
      } catch {
        throw new GraphConfigError(`Cannot load ${where}: the file does not exist`);
      }
      let exported: any;
      try {
        const module = await import(pathToFileURL(spec.file).href);
        exported = module[spec.exportName];
      } catch (error) {
        throw new GraphConfigError(`Cannot load ${where}: ${(error as Error).message}`);
      }
      if (exported === undefined || exported === null) {
        throw new GraphConfigError(`Cannot load ${where}: the file has no export "${spec.exportName}"`);
      }
      let resolved: Resolved;
      if (typeof exported === 'function' && !isGraph(exported)) {
        resolved = { kind: 'factory', factory: exported };
      } else {
        const graph = finish(await exported);
        if (!isGraph(graph)) {
          throw new GraphConfigError(`Cannot load ${where}: the export is not a LangGraph graph, StateGraph or graph factory`);
        }
        resolved = { kind: 'graph', graph };
      }
      registry.#specs.set(spec.graphId, spec);
      registry.#resolved.set(spec.graphId, resolved);
    }
    return registry;
  }

  ids(): string[] {
    return [...this.#specs.keys()];
  }

  has(graphId: string): boolean {
    return this.#specs.has(graphId);
  }

  spec(graphId: string): GraphSpec | undefined {
    return this.#specs.get(graphId);
  }

  /**
   * The graph bound to Berth's checkpointer and store. Temporary (stateless) runs use no checkpointer.
   * Bound copies are cached so a run does not pay for building one.
   */
  async get(graphId: string, config: Record<string, unknown>, options: { checkpointer: boolean }): Promise<RunnableGraph> {
    const resolved = this.#resolved.get(graphId);
    if (!resolved) throw new GraphConfigError(`Graph "${graphId}" not found`);
    if (resolved.kind === 'factory') {
      const graph = finish(await resolved.factory(config));
      if (!isGraph(graph)) throw new Error(`The factory of graph "${graphId}" did not return a graph`);
      return this.#bind(graph, options.checkpointer);
    }
    const key = `${graphId}:${options.checkpointer}`;
    let bound = this.#bound.get(key);
    if (!bound) {
      bound = this.#bind(resolved.graph, options.checkpointer);
      this.#bound.set(key, bound);
    }
    return bound;
  }

  #bind(graph: RunnableGraph, withCheckpointer: boolean): RunnableGraph {
    const copy = Object.assign(Object.create(Object.getPrototypeOf(graph)), graph) as RunnableGraph;
    copy.checkpointer = withCheckpointer ? this.#persistence.checkpointer : undefined;
    copy.store = this.#persistence.store;
    return copy;
  }
}
