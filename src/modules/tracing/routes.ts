// HTTP routes of the trace store, served at the root (where the langsmith SDK appends its paths) and under
// /api/v1. HTTP only: parsing bodies and mapping to the services.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { AppError, InputValidationError } from '../../platform/errors.ts';
import { pythonJsonError } from '../../platform/http/validation/python-json-error.ts';
import type { ValidationIssue } from '../../platform/http/validation/pydantic.ts';
import { uuidErrorText, canonicalUuid } from '../../platform/http/validation/uuid-error.ts';
import { readBody } from './ingest/body-reader.ts';
import { formToOps } from './ingest/form-ops.ts';
import { multipartBoundary, MultipartError, parseMultipart } from './ingest/multipart.ts';
import { buildRunOp, type RunOp } from './ingest/run-op.ts';
import { normalizeTime } from './ingest/times.ts';
import type { FeedbackService } from './feedback-service.ts';
import type { IngestService } from './ingest-service.ts';
import type { RunQueryService } from './query-service.ts';
import type { SessionsService } from './sessions-service.ts';
import {
  Accepted, AttachmentParams, BatchBody, ErrorBody, FeedbackCreate, FeedbackListQuery, FeedbackParams, RunBody, RunPage, RunParams,
  RunQueryBody, ServerInfo, Session, SessionCreate, SessionCreateQuery, SessionListQuery, SessionParams, SessionPatch,
} from './schemas.ts';

export interface TracingRouteDeps {
  ingest: IngestService;
  queries: RunQueryService;
  sessions: SessionsService;
  feedback: FeedbackService;
  version: string;
  /** Largest accepted request body after decompression. */
  maxBodyBytes: number;
  /** Advertised to the SDK as batch_ingest_config.size_limit_bytes: below maxBodyBytes by the multipart framing. */
  batchSizeLimitBytes: number;
}

const PREFIXES = ['', '/api/v1'];
const errors = { 400: ErrorBody, 404: ErrorBody, 422: ErrorBody };

function idList(raw: string | null | undefined, loc: string[]): string[] | undefined {
  if (!raw) return undefined;
  const values = raw.split(',').map((value) => value.trim()).filter((value) => value !== '');
  const issues: ValidationIssue[] = [];
  for (const value of values) {
    const error = uuidErrorText(value);
    if (error) issues.push({ type: 'uuid_parsing', loc, msg: `Input should be a valid UUID, ${error}`, input: value, ctx: { error } });
  }
  if (issues.length > 0) throw new InputValidationError(issues);
  return values.map(canonicalUuid);
}

const FILTER_FIELDS = new Set(['filter', 'trace_filter', 'tree_filter']);

/** Issues for NUL characters in any string of a request part: PostgreSQL text cannot hold them. */
function nulIssues(value: unknown, loc: (string | number)[], issues: ValidationIssue[]): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) issues.push({ type: 'string_type', loc, msg: 'String must not contain the NUL character', input: value.replaceAll('\u0000', '\ufffd') });
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => nulIssues(item, [...loc, index], issues));
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) nulIssues(item, [...loc, key], issues);
  }
}

/** preValidation hook of the non-ingest routes (ingest replaces NULs inside JSON payloads instead). */
async function rejectNul(request: FastifyRequest): Promise<void> {
  const issues: ValidationIssue[] = [];
  nulIssues(request.query, ['query'], issues);
  // Filters report NUL characters themselves, as a 400 with the position like any other filter error.
  const body = request.body;
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    for (const [key, value] of Object.entries(body)) if (!FILTER_FIELDS.has(key)) nulIssues(value, ['body', key], issues);
  } else {
    nulIssues(body, ['body'], issues);
  }
  if (issues.length > 0) throw new InputValidationError(issues);
}

function timeParam(value: string | null | undefined, loc: string[]): string | undefined {
  if (value === undefined || value === null) return undefined;
  const time = normalizeTime(value);
  if (time === undefined) throw new InputValidationError([{ type: 'datetime_parsing', loc, msg: 'Input should be a valid datetime', input: value }]);
  return time;
}

export function registerTracingRoutes(app: FastifyInstance, deps: TracingRouteDeps): void {
  app.register(async (scope) => {
    // Ingest bodies may be gzip-compressed (the SDK does so when /info allows it) and are size-limited after
    // decompression; JSON keeps the platform's FastAPI-shaped decode errors.
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', async (request: FastifyRequest, payload: NodeJS.ReadableStream) => {
      const text = (await readBody(payload as never, request.headers['content-encoding'], deps.maxBodyBytes)).toString('utf8');
      if (text.trim() === '') return undefined;
      try {
        return JSON.parse(text);
      } catch {
        const problem = pythonJsonError(text) ?? { pos: 0, msg: 'Expecting value' };
        throw new InputValidationError([{ type: 'json_invalid', loc: ['body', problem.pos], msg: 'JSON decode error', input: {}, ctx: { error: problem.msg } }]);
      }
    });
    scope.addContentTypeParser('multipart/form-data', async (request: FastifyRequest, payload: NodeJS.ReadableStream) =>
      readBody(payload as never, request.headers['content-encoding'], deps.maxBodyBytes));
    for (const prefix of PREFIXES) registerAt(scope, prefix, deps);
  });
}

function registerAt(app: FastifyInstance, prefix: string, deps: TracingRouteDeps): void {
  const hide = prefix !== '';
  const tags = ['Tracing'];

  app.get(`${prefix}/info`, {
    schema: { tags, hide, summary: 'Server info for the langsmith SDK', response: { 200: ServerInfo } },
  }, async () => ({
    version: deps.version,
    license_expiration_time: null,
    batch_ingest_config: {
      use_multipart_endpoint: true,
      size_limit_bytes: deps.batchSizeLimitBytes,
      size_limit: 100,
      scale_up_qsize_trigger: 1000,
      scale_up_nthreads_limit: 16,
      scale_down_nempty_trigger: 4,
    },
    instance_flags: { gzip_body_enabled: true, zstd_compression_enabled: true, dataset_examples_multipart_enabled: false },
  }));

  app.post(`${prefix}/runs/multipart`, {
    schema: { tags, hide, summary: 'Ingest runs (multipart)', description: 'Parts post.{id}, patch.{id}, {post|patch}.{id}.{inputs|outputs|events|extra|error|serialized}, attachment.{id}.{name}. Good runs are stored even when others in the same request are rejected (422 names them).', response: { 202: Accepted, 413: ErrorBody, ...errors } },
  }, async (request, reply) => {
    const boundary = multipartBoundary(request.headers['content-type']);
    if (!boundary) throw new AppError('bad_request', 'Content-Type must be multipart/form-data with a boundary');
    if (!Buffer.isBuffer(request.body)) throw new AppError('bad_request', 'Request body is empty');
    let parts;
    try {
      parts = parseMultipart(request.body, boundary);
    } catch (error) {
      if (error instanceof MultipartError) throw new AppError('bad_request', `Malformed multipart body: ${error.message}`);
      throw error;
    }
    const { ops, issues } = formToOps(parts);
    await deps.ingest.ingest(request.tenantId, ops, issues);
    return reply.code(202).send({});
  });

  app.post<{ Body: Static<typeof BatchBody> }>(`${prefix}/runs/batch`, {
    schema: { tags, hide, summary: 'Ingest runs (batch)', body: BatchBody, response: { 202: Accepted, 413: ErrorBody, ...errors } },
  }, async (request, reply) => {
    const ops: RunOp[] = [];
    const issues: ValidationIssue[] = [];
    for (const kind of ['post', 'patch'] as const) {
      (request.body[kind] ?? []).forEach((run, index) => {
        const result = buildRunOp(kind, run, ['body', kind, index]);
        if (result.op) ops.push(result.op);
        issues.push(...result.issues);
      });
    }
    await deps.ingest.ingest(request.tenantId, ops, issues);
    return reply.code(202).send({});
  });

  app.post<{ Body: Static<typeof RunBody> }>(`${prefix}/runs`, {
    schema: { tags, hide, summary: 'Create a run', body: RunBody, response: { 202: Accepted, 413: ErrorBody, ...errors } },
  }, async (request, reply) => {
    const result = buildRunOp('post', request.body, ['body']);
    if (!result.op) throw new InputValidationError(result.issues);
    await deps.ingest.ingest(request.tenantId, [result.op]);
    return reply.code(202).send({});
  });

  app.patch<{ Params: Static<typeof RunParams>; Body: Static<typeof RunBody> }>(`${prefix}/runs/:run_id`, {
    schema: { tags, hide, summary: 'Update a run', params: RunParams, body: RunBody, response: { 202: Accepted, 413: ErrorBody, ...errors } },
  }, async (request, reply) => {
    const result = buildRunOp('patch', request.body, ['body'], canonicalUuid(request.params.run_id));
    if (!result.op) throw new InputValidationError(result.issues);
    await deps.ingest.ingest(request.tenantId, [result.op]);
    return reply.code(202).send({});
  });

  app.post<{ Body: Static<typeof RunQueryBody> }>(`${prefix}/runs/query`, {
    preValidation: rejectNul,
    schema: { tags, hide, summary: 'Query runs', description: 'Keyset-paginated: pass cursors.next back as cursor.', body: RunQueryBody, response: { 200: RunPage, ...errors } },
    config: { bodyOptional: true },
  }, async (request) => {
    const body = (request.body ?? { limit: 100, order: 'desc' }) as Static<typeof RunQueryBody>;
    return deps.queries.query(request.tenantId, {
      ...body,
      limit: body.limit ?? 100,
      order: body.order ?? 'desc',
      start_time: timeParam(body.start_time, ['body', 'start_time']) ?? null,
      end_time: timeParam(body.end_time, ['body', 'end_time']) ?? null,
    });
  });

  app.get<{ Params: Static<typeof RunParams> }>(`${prefix}/runs/:run_id`, {
    schema: { tags, hide, summary: 'Read a run', params: RunParams, response: { ...errors } },
  }, async (request) => deps.queries.get(request.tenantId, canonicalUuid(request.params.run_id)));

  app.get<{ Params: Static<typeof AttachmentParams> }>(`${prefix}/runs/:run_id/attachments/:name`, {
    schema: { tags, hide, summary: 'Download a run attachment', params: AttachmentParams, response: { ...errors } },
  }, async (request, reply) => {
    const file = await deps.queries.attachment(request.tenantId, canonicalUuid(request.params.run_id), request.params.name);
    return reply.type(file.mimeType).send(file.content);
  });

  app.post<{ Body: Static<typeof SessionCreate>; Querystring: Static<typeof SessionCreateQuery> }>(`${prefix}/sessions`, {
    preValidation: rejectNul,
    schema: { tags, hide, summary: 'Create a project', body: SessionCreate, querystring: SessionCreateQuery, response: { 200: Session, 409: ErrorBody, ...errors } },
  }, async (request) => {
    const { id, name, description, extra, reference_dataset_id: dataset, start_time: start, end_time: end } = request.body;
    return deps.sessions.create(request.tenantId, {
      name,
      ...(id ? { id: canonicalUuid(id) } : {}),
      ...(description !== undefined ? { description } : {}),
      ...(extra !== undefined ? { extra } : {}),
      ...(dataset !== undefined ? { reference_dataset_id: dataset } : {}),
      ...(start ? { start_time: timeParam(start, ['body', 'start_time'])! } : {}),
      ...(end !== undefined ? { end_time: end === null ? null : timeParam(end, ['body', 'end_time'])! } : {}),
    }, request.query.upsert);
  });

  app.get<{ Querystring: Static<typeof SessionListQuery> }>(`${prefix}/sessions`, {
    preValidation: rejectNul,
    schema: { tags, hide, summary: 'List projects', description: 'Sorted by name; offset/limit pages.', querystring: SessionListQuery, response: { 422: ErrorBody } },
  }, async (request) => {
    const { name, name_contains: nameContains, reference_dataset: dataset, id, limit, offset } = request.query;
    const ids = idList(id, ['query', 'id']);
    return deps.sessions.list(request.tenantId, {
      ...(name ? { name } : {}),
      ...(nameContains ? { nameContains } : {}),
      ...(dataset ? { referenceDatasetId: dataset } : {}),
      ...(ids ? { ids } : {}),
    }, limit, offset);
  });

  app.get<{ Params: Static<typeof SessionParams> }>(`${prefix}/sessions/:session_id`, {
    preValidation: rejectNul,
    schema: { tags, hide, summary: 'Read a project', params: SessionParams, response: { 200: Session, ...errors } },
  }, async (request) => deps.sessions.get(request.tenantId, canonicalUuid(request.params.session_id)));

  app.patch<{ Params: Static<typeof SessionParams>; Body: Static<typeof SessionPatch> }>(`${prefix}/sessions/:session_id`, {
    preValidation: rejectNul,
    schema: { tags, hide, summary: 'Update a project', params: SessionParams, body: SessionPatch, response: { 200: Session, 409: ErrorBody, ...errors } },
  }, async (request) => {
    const { name, description, extra, end_time: end } = request.body;
    return deps.sessions.update(request.tenantId, canonicalUuid(request.params.session_id), {
      ...(name ? { name } : {}),
      ...(description !== undefined ? { description } : {}),
      ...(extra !== undefined ? { extra } : {}),
      ...(end !== undefined ? { end_time: end === null ? null : timeParam(end, ['body', 'end_time'])! } : {}),
    });
  });

  app.delete<{ Params: Static<typeof SessionParams> }>(`${prefix}/sessions/:session_id`, {
    preValidation: rejectNul,
    schema: { tags, hide, summary: 'Delete a project and its runs', params: SessionParams, response: { 202: Accepted, ...errors } },
  }, async (request, reply) => {
    await deps.sessions.delete(request.tenantId, canonicalUuid(request.params.session_id));
    return reply.code(202).send({});
  });

  app.post<{ Body: Static<typeof FeedbackCreate> }>(`${prefix}/feedback`, {
    preValidation: rejectNul,
    schema: { tags, hide, summary: 'Create feedback on a run', body: FeedbackCreate, response: { 409: ErrorBody, ...errors } },
  }, async (request) => {
    const { score } = request.body;
    if (score !== undefined && score !== null && typeof score !== 'boolean' && (typeof score !== 'number' || !Number.isFinite(score))) {
      throw new InputValidationError([{ type: 'float_type', loc: ['body', 'score'], msg: 'Input should be a valid number or boolean', input: score }]);
    }
    return deps.feedback.create(request.tenantId, {
      ...request.body,
      run_id: canonicalUuid(request.body.run_id),
      score: score as number | boolean | null | undefined,
    });
  });

  app.get<{ Querystring: Static<typeof FeedbackListQuery> }>(`${prefix}/feedback`, {
    preValidation: rejectNul,
    schema: { tags, hide, summary: 'List feedback', querystring: FeedbackListQuery, response: { 422: ErrorBody } },
  }, async (request) => {
    const keys = request.query.key ? request.query.key.split(',').map((key) => key.trim()).filter(Boolean) : undefined;
    return deps.feedback.list(request.tenantId, idList(request.query.run, ['query', 'run']), keys, request.query.limit, request.query.offset);
  });

  app.get<{ Params: Static<typeof FeedbackParams> }>(`${prefix}/feedback/:feedback_id`, {
    preValidation: rejectNul,
    schema: { tags, hide, summary: 'Read feedback', params: FeedbackParams, response: { ...errors } },
  }, async (request) => deps.feedback.get(request.tenantId, canonicalUuid(request.params.feedback_id)));

  app.delete<{ Params: Static<typeof FeedbackParams> }>(`${prefix}/feedback/:feedback_id`, {
    preValidation: rejectNul,
    schema: { tags, hide, summary: 'Delete feedback', params: FeedbackParams, response: { 202: Accepted, ...errors } },
  }, async (request, reply) => {
    await deps.feedback.delete(request.tenantId, canonicalUuid(request.params.feedback_id));
    return reply.code(202).send({});
  });
}
