// /assistants…
import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { toJsonSchema } from '@langchain/core/utils/json_schema';
import type { AssistantService } from '../assistants.ts';
import type { GraphRegistry } from '../graphs.ts';
import type { ThreadService } from '../threads.ts';
import * as S from '../schemas.ts';
import { nullToUndefined as u, paginate, project } from './common.ts';

const tags = ['Assistants'];

export function registerAssistantRoutes(app: FastifyInstance, assistants: AssistantService, threads: ThreadService, registry: GraphRegistry): void {
  app.post<{ Body: Static<typeof S.AssistantCreate> }>('/assistants', {
    schema: { tags, summary: 'Create Assistant', body: S.AssistantCreate },
  }, async (request) => {
    const body = request.body;
    return assistants.create({
      assistant_id: u(body.assistant_id), graph_id: body.graph_id, config: u(body.config), context: u(body.context),
      metadata: u(body.metadata), if_exists: u(body.if_exists), name: u(body.name), description: body.description,
    });
  });

  app.post<{ Body: Static<typeof S.AssistantSearch> }>('/assistants/search', {
    schema: { tags, summary: 'Search Assistants', body: S.AssistantSearch }, config: { bodyOptional: true },
  }, async (request, reply) => {
    const body = request.body ?? { limit: 10, offset: 0 };
    const limit = body.limit ?? 10;
    const offset = body.offset ?? 0;
    const { rows, total } = await assistants.search(
      { graphId: u(body.graph_id), metadata: u(body.metadata), name: u(body.name) },
      { limit, offset, sortBy: u(body.sort_by), sortOrder: u(body.sort_order) },
    );
    paginate(reply, offset, rows.length, limit, total);
    return project(rows as unknown as Record<string, unknown>[], body.select);
  });

  app.post<{ Body: Static<typeof S.AssistantCount> }>('/assistants/count', {
    schema: { tags, summary: 'Count Assistants', body: S.AssistantCount }, config: { bodyOptional: true },
  }, async (request) => {
    const body = request.body ?? {};
    return assistants.count({ graphId: u(body.graph_id), metadata: u(body.metadata), name: u(body.name) });
  });

  app.get<{ Params: Static<typeof S.AssistantIdParams> }>('/assistants/:assistant_id', {
    schema: { tags, summary: 'Get Assistant', params: S.AssistantIdParams },
  }, async (request) => assistants.get(request.params.assistant_id));

  app.patch<{ Params: Static<typeof S.AssistantIdParams>; Body: Static<typeof S.AssistantPatch> }>('/assistants/:assistant_id', {
    schema: { tags, summary: 'Patch Assistant', params: S.AssistantIdParams, body: S.AssistantPatch }, config: { bodyOptional: true },
  }, async (request) => {
    const body = request.body ?? {};
    return assistants.patch(request.params.assistant_id, {
      graph_id: u(body.graph_id), config: u(body.config), context: u(body.context), metadata: u(body.metadata),
      name: u(body.name), description: body.description,
    });
  });

  app.delete<{ Params: Static<typeof S.AssistantIdParams>; Querystring: Static<typeof S.DeleteAssistantQuery> }>('/assistants/:assistant_id', {
    schema: { tags, summary: 'Delete Assistant', params: S.AssistantIdParams, querystring: S.DeleteAssistantQuery },
  }, async (request, reply) => {
    const assistant = await assistants.get(request.params.assistant_id);
    await assistants.delete(assistant.assistant_id);
    if (request.query.delete_threads) {
      const { rows } = await threads.search({ metadata: { assistant_id: assistant.assistant_id } }, { limit: 10_000, offset: 0 });
      for (const thread of rows) await threads.delete(thread.thread_id).catch(() => undefined);
    }
    return reply.code(204).send();
  });

  app.post<{ Params: Static<typeof S.AssistantIdParams>; Body: Static<typeof S.AssistantLatest> }>('/assistants/:assistant_id/latest', {
    schema: { tags, summary: 'Set Latest Assistant Version', params: S.AssistantIdParams, body: S.AssistantLatest },
  }, async (request) => assistants.setLatest(request.params.assistant_id, request.body.version));

  app.post<{ Params: Static<typeof S.AssistantIdParams>; Body: Static<typeof S.AssistantVersionsSearch> }>('/assistants/:assistant_id/versions', {
    schema: { tags, summary: 'Get Assistant Versions', params: S.AssistantIdParams, body: S.AssistantVersionsSearch }, config: { bodyOptional: true },
  }, async (request) => {
    const body = request.body ?? { limit: 10, offset: 0 };
    return assistants.versions(request.params.assistant_id, u(body.metadata), body.limit ?? 10, body.offset ?? 0);
  });

  app.get<{ Params: Static<typeof S.AssistantIdParams>; Querystring: Static<typeof S.GraphQuery> }>('/assistants/:assistant_id/graph', {
    schema: { tags, summary: 'Get Assistant Graph', params: S.AssistantIdParams, querystring: S.GraphQuery },
  }, async (request) => {
    const assistant = await assistants.get(request.params.assistant_id);
    const graph = await registry.get(assistant.graph_id, { configurable: assistant.config.configurable ?? {} }, { checkpointer: false });
    const xray = request.query.xray;
    const drawable = await graph.getGraphAsync({ ...assistant.config, ...(xray !== undefined ? { xray } : {}) });
    return drawable.toJSON();
  });

  app.get<{ Params: Static<typeof S.AssistantIdParams> }>('/assistants/:assistant_id/schemas', {
    schema: { tags, summary: 'Get Assistant Schemas', params: S.AssistantIdParams },
  }, async (request) => {
    const assistant = await assistants.get(request.params.assistant_id);
    const graph = await registry.get(assistant.graph_id, { configurable: {} }, { checkpointer: false });
    return { graph_id: assistant.graph_id, ...(await graphSchemas(graph)) };
  });

  const subgraphs = async (assistantId: string, namespace: string | undefined, recurse: boolean) => {
    const assistant = await assistants.get(assistantId);
    const graph = await registry.get(assistant.graph_id, { configurable: {} }, { checkpointer: false });
    const out: Record<string, unknown> = {};
    if (typeof graph.getSubgraphsAsync !== 'function') return out;
    for await (const [ns, subgraph] of graph.getSubgraphsAsync(namespace, recurse)) out[ns] = await graphSchemas(subgraph);
    return out;
  };
  app.get<{ Params: Static<typeof S.AssistantIdParams>; Querystring: Static<typeof S.SubgraphQuery> }>('/assistants/:assistant_id/subgraphs', {
    schema: { tags, summary: 'Get Assistant Subgraphs', params: S.AssistantIdParams, querystring: S.SubgraphQuery },
  }, async (request) => subgraphs(request.params.assistant_id, undefined, request.query.recurse));
  app.get<{ Params: { assistant_id: string; namespace: string }; Querystring: Static<typeof S.SubgraphQuery> }>('/assistants/:assistant_id/subgraphs/:namespace', {
    schema: { tags, summary: 'Get Assistant Subgraphs by Namespace', querystring: S.SubgraphQuery },
  }, async (request) => subgraphs(request.params.assistant_id, request.params.namespace, request.query.recurse));
}

/** JSON schemas of a graph whose state is defined with zod; null where the graph gives none (Annotation state). */
async function graphSchemas(graph: any): Promise<Record<string, unknown>> {
  const toJson = (schema: unknown) => {
    if (!schema || typeof schema !== 'object') return null;
    if (!('_def' in schema)) {
      // Annotation state: the channel names are known, their value types are not (they live in TypeScript types).
      const keys = Object.keys(schema).filter((key) => !key.startsWith('__'));
      return keys.length ? { type: 'object', properties: Object.fromEntries(keys.map((key) => [key, {}])) } : null;
    }
    try {
      return toJsonSchema(schema as any);
    } catch {
      return null;
    }
  };
  const builder = graph.builder ?? {};
  return {
    input_schema: toJson(builder._inputRuntimeDefinition ?? builder._inputDefinition),
    output_schema: toJson(builder._outputRuntimeDefinition ?? builder._outputDefinition),
    state_schema: toJson(builder._schemaRuntimeDefinition ?? builder._schemaDefinition),
    config_schema: toJson(builder._configRuntimeSchema ?? builder._configSchema),
    context_schema: toJson(builder._contextSchema),
  };
}
