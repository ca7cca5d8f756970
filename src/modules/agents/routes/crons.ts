// /runs/crons… and /threads/{thread_id}/runs/crons
import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import type { CronBody, CronService } from '../crons.ts';
import * as S from '../schemas.ts';
import { nullToUndefined as u, project } from './common.ts';

const tags = ['Crons'];

function clean<T extends object>(body: T): CronBody & { schedule: string; assistant_id: string } {
  return Object.fromEntries(Object.entries(body).filter(([key, value]) => value !== null || key === 'end_time')) as any;
}

export function registerCronRoutes(app: FastifyInstance, crons: CronService): void {
  app.post<{ Body: Static<typeof S.CronCreate> }>('/runs/crons', {
    schema: { tags, summary: 'Create Cron', body: S.CronCreate },
  }, async (request) => crons.create(undefined, clean(request.body)));

  app.post<{ Params: Static<typeof S.ThreadIdParams>; Body: Static<typeof S.CronCreate> }>('/threads/:thread_id/runs/crons', {
    schema: { tags, summary: 'Create Thread Cron', params: S.ThreadIdParams, body: S.CronCreate },
  }, async (request) => crons.create(request.params.thread_id, clean(request.body)));

  app.patch<{ Params: Static<typeof S.CronIdParams>; Body: Static<typeof S.CronPatch> }>('/runs/crons/:cron_id', {
    schema: { tags, summary: 'Patch Cron', params: S.CronIdParams, body: S.CronPatch },
  }, async (request) => crons.patch(request.params.cron_id, clean(request.body)));

  app.delete<{ Params: Static<typeof S.CronIdParams> }>('/runs/crons/:cron_id', {
    schema: { tags, summary: 'Delete Cron', params: S.CronIdParams },
  }, async (request, reply) => {
    await crons.delete(request.params.cron_id);
    return reply.code(204).send();
  });

  app.post<{ Body: Static<typeof S.CronSearch> }>('/runs/crons/search', {
    schema: { tags, summary: 'Search Crons', body: S.CronSearch }, config: { bodyOptional: true },
  }, async (request) => {
    const body = request.body ?? { limit: 10, offset: 0 };
    const rows = await crons.search(
      { assistantId: u(body.assistant_id), threadId: u(body.thread_id), enabled: u(body.enabled), metadata: u(body.metadata) },
      { limit: body.limit ?? 10, offset: body.offset ?? 0, sortBy: u(body.sort_by), sortOrder: u(body.sort_order) },
    );
    return project(rows as unknown as Record<string, unknown>[], body.select);
  });

  app.post<{ Body: Static<typeof S.CronCount> }>('/runs/crons/count', {
    schema: { tags, summary: 'Count Crons', body: S.CronCount }, config: { bodyOptional: true },
  }, async (request) => {
    const body = request.body ?? {};
    return crons.count({ assistantId: u(body.assistant_id), threadId: u(body.thread_id), metadata: u(body.metadata) });
  });
}
