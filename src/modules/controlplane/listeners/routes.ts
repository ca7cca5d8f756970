// HTTP routes of listeners (/v2/listeners…), the self-hosted data planes of a workspace. HTTP only.
// The reference's 403 ("only allowed for LangSmith organizations with self-hosted enterprise plans") is a
// plan check of the hosted service; every Berth is self-hosted, so no listener path answers it.
import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import {
  ErrorBody, ListenerCreateRequest, Listener, ListenerParams, ListenerPatchRequest, ListenersList, ListListenersQuery,
} from '../schemas.ts';
import type { ListenerService } from './service.ts';

const tags = ['Listeners'];
const errors = { 404: ErrorBody, 422: ErrorBody };

export function registerListenerRoutes(app: FastifyInstance, listeners: ListenerService): void {
  app.get<{ Querystring: Static<typeof ListListenersQuery> }>('/v2/listeners', {
    schema: { tags, summary: 'List Listeners', description: 'Lists the listeners of the workspace, newest first.', querystring: ListListenersQuery, response: { 200: ListenersList, 422: ErrorBody } },
  }, async (request) => listeners.list(request.tenantId, request.query.limit, request.query.offset));

  app.post<{ Body: Static<typeof ListenerCreateRequest> }>('/v2/listeners', {
    schema: { tags, summary: 'Create Listener', description: 'A workspace has one listener per compute_id (409 otherwise).', body: ListenerCreateRequest, response: { 201: Listener, 409: ErrorBody, 422: ErrorBody } },
  }, async (request, reply) => reply.code(201).send(await listeners.create(request.tenantId, request.body)));

  app.get<{ Params: Static<typeof ListenerParams> }>('/v2/listeners/:listener_id', {
    schema: { tags, summary: 'Get Listener', params: ListenerParams, response: { 200: Listener, ...errors } },
  }, async (request) => listeners.get(request.tenantId, request.params.listener_id));

  app.patch<{ Params: Static<typeof ListenerParams>; Body: Static<typeof ListenerPatchRequest> }>('/v2/listeners/:listener_id', {
    schema: { tags, summary: 'Patch Listener', description: 'Changes version and compute_config; absent or null fields are kept.', params: ListenerParams, body: ListenerPatchRequest, response: { 200: Listener, ...errors } },
  }, async (request) => listeners.patch(request.tenantId, request.params.listener_id, request.body));

  app.delete<{ Params: Static<typeof ListenerParams> }>('/v2/listeners/:listener_id', {
    schema: { tags, summary: 'Delete Listener', params: ListenerParams, response: { 204: Type.Null(), ...errors } },
  }, async (request, reply) => {
    await listeners.delete(request.tenantId, request.params.listener_id);
    return reply.code(204).send();
  });
}
