// /threads/{thread_id}/runs… and stateless /runs…: create, stream, wait, join, cancel.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import type { RunCreate, RunListener, RunService } from '../runs.ts';
import { decodeEnd } from '../run-events.ts';
import type { RunRow, RunStatus } from '../repo/runs.ts';
import { openSse } from '../../../platform/http/sse.ts';
import { notFound } from '../../../platform/errors.ts';
import * as S from '../schemas.ts';

const tags = ['Thread Runs'];
const statelessTags = ['Stateless Runs'];
const KEEPALIVE_MS = 5_000;

function location(run: RunRow, stateless: boolean): string {
  return stateless ? `/runs/${run.run_id}` : `/threads/${run.thread_id}/runs/${run.run_id}`;
}

function publicRun(run: RunRow): Record<string, unknown> {
  const { attempt: _a, worker_id: _w, cancel_action: _c, webhook: _h, ...rest } = run;
  return rest;
}

function clean(body: Static<typeof S.RunCreate>): RunCreate {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== null)) as unknown as RunCreate;
}

/** Writes a listener's events as SSE until the run ends or the client leaves. */
async function pump(request: FastifyRequest, reply: FastifyReply, listener: RunListener, options: {
  headers?: Record<string, string>;
  /** Asked while idle: a run that ended without its end message reaching us (another process died) still ends the stream. */
  isOver?: () => Promise<boolean>;
  replay?: { seq: number; event: string; data: string }[];
  /** The last id the client has: live events up to it (stored and replayed already, or seen before) are dropped. */
  after?: number;
  onDisconnect?: () => void;
  alreadyEnded?: boolean;
}): Promise<void> {
  const sse = openSse(request, reply, options.headers);
  if (options.onDisconnect) sse.onClose(options.onDisconnect);
  let last = options.after ?? -Infinity;
  try {
    for (const event of options.replay ?? []) {
      sse.send(event.event, event.data, event.seq);
      last = event.seq;
    }
    if (options.alreadyEnded) return;
    for (;;) {
      const next = await listener.next(KEEPALIVE_MS);
      if (sse.closed) return;
      if (next === 'timeout') {
        sse.keepAlive();
        if (options.isOver && (await options.isOver())) return;
        continue;
      }
      if (next === undefined) return;
      if (next.seq <= last) continue;
      sse.send(next.event, next.data, next.seq);
    }
  } finally {
    listener.close();
    sse.end();
  }
}

/** Answers with the run's final values; past one second, keeps the connection alive with newlines. */
async function respondWhenDone(request: FastifyRequest, reply: FastifyReply, listener: RunListener, options: {
  headers?: Record<string, string>;
  isOver?: () => Promise<boolean>;
  finished?: () => Promise<string>;
  /** The answer when the run ended without its end message (read from storage). */
  fallback?: () => Promise<string>;
  onDisconnect?: () => void;
}): Promise<void> {
  try {
    const resultOf = async () => {
      if (options.finished) return options.finished();
      if (listener.end) return decodeEnd(listener.end).result;
      return 'null';
    };
    if (options.finished || (await listener.ended(1000))) {
      reply.headers({ ...options.headers, 'content-type': 'application/json' });
      return void reply.send(await resultOf());
    }
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, { 'content-type': 'application/json', 'x-request-id': String(request.id), ...options.headers });
    let gone = false;
    raw.on('close', () => {
      if (!raw.writableFinished) {
        gone = true;
        options.onDisconnect?.();
      }
    });
    let over = false;
    while (!gone && !over && !(await listener.ended(1000))) {
      raw.write('\n');
      over = options.isOver ? await options.isOver() : false;
    }
    if (!gone) raw.end(over && !listener.end && options.finished === undefined ? await options.fallback!() : await resultOf());
  } finally {
    listener.close();
  }
}

export function registerRunRoutes(app: FastifyInstance, runs: RunService): void {
  const isOver = (runId: string) => async () => {
    const run = await runs.repo.get(runId);
    return !run || runs.isTerminal(run);
  };
  const fallback = (runId: string) => async () => {
    const run = await runs.repo.get(runId);
    return run ? runs.finishedResult(run) : 'null';
  };
  // ---- create ----
  const createBackground = async (threadId: string | undefined, body: Static<typeof S.RunCreate>, reply: FastifyReply) => {
    const { run } = await runs.create(threadId, clean(body));
    reply.header('content-location', location(run, threadId === undefined));
    return publicRun(run);
  };
  const createStream = async (threadId: string | undefined, request: FastifyRequest<{ Body: Static<typeof S.RunCreate> }>, reply: FastifyReply) => {
    const body = clean(request.body);
    const { run, listener } = await runs.create(threadId, body, { listen: 'events' });
    await pump(request, reply, listener!, {
      headers: { 'content-location': location(run, threadId === undefined) },
      isOver: isOver(run.run_id),
      onDisconnect: body.on_disconnect === 'cancel' ? () => void runs.cancel([run.run_id], 'interrupt') : undefined,
    });
  };
  const createWait = async (threadId: string | undefined, request: FastifyRequest<{ Body: Static<typeof S.RunCreate> }>, reply: FastifyReply) => {
    const body = clean(request.body);
    const { run, listener } = await runs.create(threadId, body, { listen: 'end' });
    await respondWhenDone(request, reply, listener!, {
      headers: { 'content-location': location(run, threadId === undefined) },
      isOver: isOver(run.run_id),
      fallback: fallback(run.run_id),
      onDisconnect: body.on_disconnect === 'cancel' ? () => void runs.cancel([run.run_id], 'interrupt') : undefined,
    });
  };

  type ThreadReq = { Params: Static<typeof S.ThreadIdParams>; Body: Static<typeof S.RunCreate> };
  app.post<ThreadReq>('/threads/:thread_id/runs', { schema: { tags, summary: 'Create Background Run', params: S.ThreadIdParams, body: S.RunCreate } },
    async (request, reply) => createBackground(request.params.thread_id, request.body, reply));
  app.post<ThreadReq>('/threads/:thread_id/runs/stream', { schema: { tags, summary: 'Create Run, Stream Output', params: S.ThreadIdParams, body: S.RunCreate } },
    async (request, reply) => createStream(request.params.thread_id, request, reply));
  app.post<ThreadReq>('/threads/:thread_id/runs/wait', { schema: { tags, summary: 'Create Run, Wait for Output', params: S.ThreadIdParams, body: S.RunCreate } },
    async (request, reply) => createWait(request.params.thread_id, request, reply));

  type StatelessReq = { Body: Static<typeof S.RunCreate> };
  app.post<StatelessReq>('/runs', { schema: { tags: statelessTags, summary: 'Create Background Run', body: S.RunCreate } },
    async (request, reply) => createBackground(undefined, request.body, reply));
  app.post<StatelessReq>('/runs/stream', { schema: { tags: statelessTags, summary: 'Create Run, Stream Output', body: S.RunCreate } },
    async (request, reply) => createStream(undefined, request, reply));
  app.post<StatelessReq>('/runs/wait', { schema: { tags: statelessTags, summary: 'Create Run, Wait for Output', body: S.RunCreate } },
    async (request, reply) => createWait(undefined, request, reply));
  app.post<{ Body: Static<typeof S.RunBatch> }>('/runs/batch', { schema: { tags: statelessTags, summary: 'Create Run Batch', body: S.RunBatch } },
    async (request) => {
      const out: Record<string, unknown>[] = [];
      for (const body of request.body) out.push(publicRun((await runs.create(undefined, clean(body))).run));
      return out;
    });

  // ---- read, delete ----
  app.get<{ Params: Static<typeof S.ThreadIdParams>; Querystring: Static<typeof S.RunListQuery> }>('/threads/:thread_id/runs', {
    schema: { tags, summary: 'List Runs', params: S.ThreadIdParams, querystring: S.RunListQuery },
  }, async (request) => {
    const rows = await runs.repo.list(request.params.thread_id, { limit: request.query.limit, offset: request.query.offset, status: request.query.status });
    return rows.map(publicRun);
  });
  app.get<{ Params: Static<typeof S.ThreadRunParams> }>('/threads/:thread_id/runs/:run_id', {
    schema: { tags, summary: 'Get Run', params: S.ThreadRunParams },
  }, async (request) => publicRun(await runs.get(request.params.run_id, request.params.thread_id)));
  app.delete<{ Params: Static<typeof S.ThreadRunParams> }>('/threads/:thread_id/runs/:run_id', {
    schema: { tags, summary: 'Delete Run', params: S.ThreadRunParams },
  }, async (request, reply) => {
    await runs.delete(request.params.run_id, request.params.thread_id);
    return reply.code(204).send();
  });

  // ---- join ----
  // Listen (and tell other processes) before reading the run, so its end cannot fall between the two.
  const announceThenRead = async (listener: { announce(): Promise<unknown>; close(): void }, runId: string, threadId: string | undefined): Promise<RunRow> => {
    try {
      await listener.announce();
      return await runs.get(runId, threadId);
    } catch (error) {
      listener.close();
      throw error;
    }
  };
  const join = async (runId: string, threadId: string | undefined, request: FastifyRequest, reply: FastifyReply) => {
    await runs.get(runId, threadId);
    const listener = runs.listenEnd(runId);
    const run = await announceThenRead(listener, runId, threadId);
    await respondWhenDone(request, reply, listener, {
      finished: runs.isTerminal(run) ? () => runs.finishedResult(run) : undefined,
      isOver: isOver(runId),
      fallback: fallback(runId),
    });
  };
  const joinStream = async (runId: string, threadId: string | undefined, cancelOnDisconnect: boolean, request: FastifyRequest, reply: FastifyReply) => {
    const listener = runs.listen(runId);
    const run = await announceThenRead(listener, runId, threadId);
    // Ids are the run's event sequence numbers: a resumable run's log is replayed after the last one the
    // client saw (all of it without the header), then the live events follow.
    const header = request.headers['last-event-id'];
    const text = (Array.isArray(header) ? header[0] : header)?.trim();
    const lastEventId = text && /^-?\d+$/.test(text) ? Number(text) : -1;
    const replay = run.kwargs.resumable ? await runs.repo.events(runId, lastEventId) : [];
    await pump(request, reply, listener, {
      replay,
      after: run.kwargs.resumable ? lastEventId : undefined,
      alreadyEnded: runs.isTerminal(run as RunRow & { status: RunStatus }),
      isOver: isOver(runId),
      onDisconnect: cancelOnDisconnect ? () => void runs.cancel([runId], 'interrupt') : undefined,
    });
  };
  app.get<{ Params: Static<typeof S.ThreadRunParams> }>('/threads/:thread_id/runs/:run_id/join', {
    schema: { tags, summary: 'Join Run', params: S.ThreadRunParams },
  }, async (request, reply) => join(request.params.run_id, request.params.thread_id, request, reply));
  app.get<{ Params: Static<typeof S.ThreadRunParams>; Querystring: Static<typeof S.JoinStreamQuery> }>('/threads/:thread_id/runs/:run_id/stream', {
    schema: { tags, summary: 'Join Run Stream', params: S.ThreadRunParams, querystring: S.JoinStreamQuery },
  }, async (request, reply) => joinStream(request.params.run_id, request.params.thread_id, request.query.cancel_on_disconnect, request, reply));
  app.get<{ Params: Static<typeof S.RunIdParams>; Querystring: Static<typeof S.JoinStreamQuery> }>('/runs/:run_id/stream', {
    schema: { tags: statelessTags, summary: 'Join Run Stream', params: S.RunIdParams, querystring: S.JoinStreamQuery },
  }, async (request, reply) => joinStream(request.params.run_id, undefined, request.query.cancel_on_disconnect, request, reply));

  app.get<{ Params: Static<typeof S.ThreadIdParams>; Querystring: Static<typeof S.ThreadStreamQuery> }>('/threads/:thread_id/stream', {
    schema: { tags: ['Threads'], summary: 'Join Thread Stream', params: S.ThreadIdParams, querystring: S.ThreadStreamQuery },
  }, async (request, reply) => {
    const threadId = request.params.thread_id;
    if (!(await runs.threadExists(threadId))) throw notFound(`Thread with ID ${threadId} not found`);
    const listener = runs.listenThread(threadId);
    await listener.announce();
    // The events of the thread's runs as they happen, until the client leaves (or the thread is deleted).
    await pump(request, reply, listener, { isOver: async () => !(await runs.threadExists(threadId)) });
  });

  // ---- cancel ----
  app.post<{ Params: Static<typeof S.ThreadRunParams>; Querystring: Static<typeof S.CancelQuery> }>('/threads/:thread_id/runs/:run_id/cancel', {
    schema: { tags, summary: 'Cancel Run', params: S.ThreadRunParams, querystring: S.CancelQuery }, config: { bodyOptional: true },
  }, async (request, reply) => {
    const run = await runs.get(request.params.run_id, request.params.thread_id);
    const listener = request.query.wait ? runs.listenEnd(run.run_id) : undefined;
    try {
      await listener?.announce();
      await runs.cancel([run.run_id], request.query.action ?? 'interrupt');
      if (listener) {
        const over = isOver(run.run_id);
        while (!(await over()) && !(await listener.ended(1000)));
        return reply.code(204).send();
      }
      return reply.code(202).send();
    } finally {
      listener?.close();
    }
  });
  app.post<{ Body: Static<typeof S.BulkCancel>; Querystring: Static<typeof S.BulkCancelQuery> }>('/runs/cancel', {
    schema: { tags: statelessTags, summary: 'Cancel Runs', body: S.BulkCancel, querystring: S.BulkCancelQuery }, config: { bodyOptional: true },
  }, async (request, reply) => {
    const body = request.body ?? {};
    const statuses: RunStatus[] = body.status === 'pending' ? ['pending'] : body.status === 'running' ? ['running'] : ['pending', 'running'];
    const selected = await runs.repo.select({ threadId: body.thread_id ?? undefined, runIds: body.run_ids ?? undefined, statuses });
    await runs.cancel(selected.map((run) => run.run_id), request.query.action ?? 'interrupt');
    return reply.code(204).send();
  });
}
