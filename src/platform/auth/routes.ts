// Admin API for tenancy: workspaces of the caller's organization and their API keys.
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { notFound, badRequest } from '../errors.ts';
import type { Authenticator } from './authenticate.ts';
import type { TenantStore } from './store.ts';

const tags = ['Administration'];
const Workspace = Type.Object({ id: Type.String({ format: 'uuid' }), organization_id: Type.String({ format: 'uuid' }), name: Type.String(), created_at: Type.String({ format: 'date-time' }) });
const ApiKey = Type.Object({
  id: Type.String({ format: 'uuid' }), key_prefix: Type.String(), organization_id: Type.String({ format: 'uuid' }),
  workspace_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]), role: Type.String(), description: Type.String(), created_at: Type.String({ format: 'date-time' }),
});
const CreateWorkspace = Type.Object({ name: Type.String({ minLength: 1, maxLength: 128 }) });
const CreateApiKey = Type.Object({
  workspace_id: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'Workspace of the key; null or absent with organization_scoped for an organization-scoped key.' })),
  organization_scoped: Type.Optional(Type.Boolean({ default: false })),
  role: Type.Optional(Type.Union([Type.Literal('admin'), Type.Literal('member')], { default: 'member' })),
  description: Type.Optional(Type.String({ maxLength: 512 })),
});
const ErrorBody = Type.Object({ detail: Type.Unknown() });
const admin = { scope: 'organization' as const, admin: true };

export function registerTenancyRoutes(app: FastifyInstance, store: TenantStore, auth: Authenticator): void {
  app.get('/api/v1/workspaces', { schema: { tags, summary: 'List Workspaces', response: { 200: Type.Array(Workspace) } }, config: admin },
    async (request) => store.listWorkspaces(request.principal!.organizationId));

  app.post<{ Body: Static<typeof CreateWorkspace> }>('/api/v1/workspaces', {
    schema: { tags, summary: 'Create Workspace', body: CreateWorkspace, response: { 201: Workspace, 422: ErrorBody } }, config: admin,
  }, async (request, reply) => reply.code(201).send(await store.createWorkspace(request.principal!.organizationId, request.body.name)));

  app.get('/api/v1/api-keys', { schema: { tags, summary: 'List API Keys', response: { 200: Type.Array(ApiKey) } }, config: admin },
    async (request) => store.listApiKeys(request.principal!.organizationId));

  app.post<{ Body: Static<typeof CreateApiKey> }>('/api/v1/api-keys', {
    schema: { tags, summary: 'Create API Key', description: 'The key itself is in the answer once and never again.', body: CreateApiKey, response: { 201: Type.Object({ key: Type.String(), api_key: ApiKey }), 400: ErrorBody, 422: ErrorBody } },
    config: admin,
  }, async (request, reply) => {
    const principal = request.principal!;
    const body = request.body;
    let workspaceId: string | null = null;
    if (!body.organization_scoped) {
      workspaceId = body.workspace_id ?? principal.homeWorkspaceId;
      if (!workspaceId) throw badRequest('Name the workspace_id of the key, or set organization_scoped.');
      if ((await store.workspaceOrganization(workspaceId)) !== principal.organizationId) throw notFound(`Workspace ID ${workspaceId} not found.`);
    }
    const { key, record } = await store.createApiKey({ organizationId: principal.organizationId, workspaceId, role: body.role ?? 'member', description: body.description ?? '' });
    return reply.code(201).send({ key, api_key: record });
  });

  app.delete<{ Params: { key_id: string } }>('/api/v1/api-keys/:key_id', {
    schema: { tags, summary: 'Revoke API Key', params: Type.Object({ key_id: Type.String({ format: 'uuid' }) }), response: { 204: Type.Null(), 404: ErrorBody, 422: ErrorBody } }, config: admin,
  }, async (request, reply) => {
    if (!(await store.revokeApiKey(request.principal!.organizationId, request.params.key_id))) throw notFound(`API key ID ${request.params.key_id} not found.`);
    auth.invalidate();
    return reply.code(204).send();
  });
}
