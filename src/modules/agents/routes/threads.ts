// /threads… (thread CRUD and state)
import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import type { ThreadService } from '../threads.ts';
import * as S from '../schemas.ts';
import { nullToUndefined as u, paginate, project } from './common.ts';

const tags = ['Threads'];

export function registerThreadRoutes(app: FastifyInstance, threads: ThreadService): void {
  app.post<{ Body: Static<typeof S.ThreadCreate> }>('/threads', {
    schema: { tags, summary: 'Create Thread', body: S.ThreadCreate }, config: { bodyOptional: true },
  }, async (request) => {
    const body = request.body ?? {};
    return threads.create({ thread_id: u(body.thread_id), metadata: u(body.metadata), if_exists: u(body.if_exists), supersteps: u(body.supersteps) as any });
  });

  app.post<{ Body: Static<typeof S.ThreadSearch> }>('/threads/search', {
    schema: { tags, summary: 'Search Threads', body: S.ThreadSearch }, config: { bodyOptional: true },
  }, async (request, reply) => {
    const body = request.body ?? { limit: 10, offset: 0 };
    const limit = body.limit ?? 10;
    const offset = body.offset ?? 0;
    const { rows, total } = await threads.search(
      { ids: u(body.ids), metadata: u(body.metadata), values: u(body.values), status: u(body.status) },
      { limit, offset, sortBy: u(body.sort_by), sortOrder: u(body.sort_order) },
    );
    paginate(reply, offset, rows.length, limit, total);
    return project(rows as unknown as Record<string, unknown>[], body.select);
  });

  app.post<{ Body: Static<typeof S.ThreadCount> }>('/threads/count', {
    schema: { tags, summary: 'Count Threads', body: S.ThreadCount }, config: { bodyOptional: true },
  }, async (request) => {
    const body = request.body ?? {};
    return threads.count({ metadata: u(body.metadata), values: u(body.values), status: u(body.status) });
  });

  app.post<{ Body: Static<typeof S.ThreadPrune> }>('/threads/prune', {
    schema: { tags, summary: 'Prune Threads', body: S.ThreadPrune },
  }, async (request) => ({ pruned_count: await threads.prune(request.body.thread_ids, request.body.strategy ?? 'delete') }));

  app.get<{ Params: Static<typeof S.ThreadIdParams> }>('/threads/:thread_id', {
    schema: { tags, summary: 'Get Thread', params: S.ThreadIdParams },
  }, async (request) => threads.get(request.params.thread_id));

  app.patch<{ Params: Static<typeof S.ThreadIdParams>; Body: Static<typeof S.ThreadPatch> }>('/threads/:thread_id', {
    schema: { tags, summary: 'Patch Thread', params: S.ThreadIdParams, body: S.ThreadPatch }, config: { bodyOptional: true },
  }, async (request) => threads.patch(request.params.thread_id, request.body?.metadata ?? {}));

  app.delete<{ Params: Static<typeof S.ThreadIdParams> }>('/threads/:thread_id', {
    schema: { tags, summary: 'Delete Thread', params: S.ThreadIdParams },
  }, async (request, reply) => {
    await threads.delete(request.params.thread_id);
    return reply.code(204).send();
  });

  app.post<{ Params: Static<typeof S.ThreadIdParams> }>('/threads/:thread_id/copy', {
    schema: { tags, summary: 'Copy Thread', params: S.ThreadIdParams }, config: { bodyOptional: true },
  }, async (request) => threads.copy(request.params.thread_id));

  app.get<{ Params: Static<typeof S.ThreadIdParams>; Querystring: Static<typeof S.StateQuery> }>('/threads/:thread_id/state', {
    schema: { tags, summary: 'Get Thread State', params: S.ThreadIdParams, querystring: S.StateQuery },
  }, async (request) => threads.state(request.params.thread_id, { subgraphs: request.query.subgraphs }));

  app.post<{ Params: Static<typeof S.ThreadIdParams>; Body: Static<typeof S.StateUpdate> }>('/threads/:thread_id/state', {
    schema: { tags, summary: 'Update Thread State', params: S.ThreadIdParams, body: S.StateUpdate },
  }, async (request) => {
    const body = request.body;
    return threads.updateState(request.params.thread_id, { values: body.values, as_node: u(body.as_node), checkpoint_id: u(body.checkpoint_id), checkpoint: u(body.checkpoint) });
  });

  app.patch<{ Params: Static<typeof S.ThreadIdParams>; Body: Static<typeof S.StatePatch> }>('/threads/:thread_id/state', {
    schema: { tags, summary: 'Patch Thread State', params: S.ThreadIdParams, body: S.StatePatch },
  }, async (request, reply) => {
    await threads.patchState(request.params.thread_id, request.body.metadata);
    return reply.code(204).send();
  });

  app.get<{ Params: Static<typeof S.CheckpointParams>; Querystring: Static<typeof S.StateQuery> }>('/threads/:thread_id/state/:checkpoint_id', {
    schema: { tags, summary: 'Get Thread State At Checkpoint', params: S.CheckpointParams, querystring: S.StateQuery },
  }, async (request) => threads.state(request.params.thread_id, { subgraphs: request.query.subgraphs, checkpoint: { checkpoint_id: request.params.checkpoint_id } }));

  app.post<{ Params: Static<typeof S.ThreadIdParams>; Body: Static<typeof S.StateCheckpoint> }>('/threads/:thread_id/state/checkpoint', {
    schema: { tags, summary: 'Get Thread State At Checkpoint', params: S.ThreadIdParams, body: S.StateCheckpoint },
  }, async (request) => {
    const { checkpoint_map: _map, ...checkpoint } = request.body.checkpoint as Record<string, unknown>;
    return threads.state(request.params.thread_id, { subgraphs: request.body.subgraphs ?? false, checkpoint });
  });

  app.post<{ Params: Static<typeof S.ThreadIdParams>; Body: Static<typeof S.HistoryBody> }>('/threads/:thread_id/history', {
    schema: { tags, summary: 'Get Thread History', params: S.ThreadIdParams, body: S.HistoryBody }, config: { bodyOptional: true },
  }, async (request) => {
    const body = request.body ?? { limit: 10 };
    const before = body.before as unknown;
    return threads.history(request.params.thread_id, {
      limit: body.limit ?? 10,
      before: before && typeof before === 'object' ? (before as any).configurable ?? before : before,
      metadata: u(body.metadata),
      checkpoint: u(body.checkpoint),
    });
  });

  app.get<{ Params: Static<typeof S.ThreadIdParams>; Querystring: Static<typeof S.HistoryQuery> }>('/threads/:thread_id/history', {
    schema: { tags, summary: 'Get Thread History', params: S.ThreadIdParams, querystring: S.HistoryQuery },
  }, async (request) => threads.history(request.params.thread_id, { limit: request.query.limit, before: request.query.before }));
}
