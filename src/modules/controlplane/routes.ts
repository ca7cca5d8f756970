// HTTP routes of the control plane (/v2/deployments…). HTTP only: rules live in the service.
import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import { InputValidationError } from '../../platform/errors.ts';
import { statusOf } from '../../platform/http/error-mapper.ts';
import { BoundedCache } from '../../platform/bounded-cache.ts';
import { literalIssue, type ValidationIssue } from '../../platform/http/validation/pydantic.ts';
import { uuidErrorText, canonicalUuid } from '../../platform/http/validation/uuid-error.ts';
import type { DataPlaneReports } from './dataplane.ts';
import type { ControlPlaneService } from './service.ts';
import {
  DeleteDeploymentQuery, DeleteDeploymentsQuery, DeleteDeploymentsResult, Deployment, DeploymentCreateRequest, DeploymentParams, DeploymentPatchRequest, DeploymentsList,
  DeployReport, ErrorBody, ListDeploymentsQuery, ListRevisionsQuery, LogsPage, LogsQuery, LogsRequestBody,
  REVISION_STATUSES, Revision, RevisionParams, RevisionsList, type RevisionStatus,
} from './schemas.ts';

const tags = ['Deployments'];
const errors = { 404: ErrorBody, 422: ErrorBody };

/** `status=A,B`: each value must be a revision status (FastAPI would take any string; the spec wants the enum). */
function parseStatuses(raw: string | null | undefined): RevisionStatus[] | undefined {
  if (!raw) return undefined;
  const values = raw.split(',').map((value) => value.trim()).filter((value) => value !== '');
  const issues: ValidationIssue[] = values
    .filter((value) => !(REVISION_STATUSES as readonly string[]).includes(value))
    .map((value) => literalIssue(['query', 'status'], REVISION_STATUSES, value));
  if (issues.length > 0) throw new InputValidationError(issues);
  return values as RevisionStatus[];
}

function parseIds(raw: string | null | undefined): string[] | undefined {
  if (!raw) return undefined;
  const values = raw.split(',').map((value) => value.trim()).filter((value) => value !== '');
  const issues: ValidationIssue[] = [];
  for (const value of values) {
    const error = uuidErrorText(value);
    if (error) issues.push({ type: 'uuid_parsing', loc: ['query', 'deployment_ids'], msg: `Input should be a valid UUID, ${error}`, input: value, ctx: { error } });
  }
  if (issues.length > 0) throw new InputValidationError(issues);
  return values.map(canonicalUuid);
}

export function registerControlPlaneRoutes(app: FastifyInstance, service: ControlPlaneService, dataPlane: DataPlaneReports): void {
  const revisionPages = new BoundedCache<string>({ max: 2000 });

  app.post<{ Body: Static<typeof DeploymentCreateRequest> }>('/v2/deployments', {
    schema: { tags, summary: 'Create Deployment', body: DeploymentCreateRequest, response: { 201: Deployment, 400: ErrorBody, 409: ErrorBody, 422: ErrorBody } },
  }, async (request, reply) => reply.code(201).send(await service.create(request.tenantId, request.body)));

  app.get<{ Querystring: Static<typeof ListDeploymentsQuery> }>('/v2/deployments', {
    schema: { tags, summary: 'List Deployments', querystring: ListDeploymentsQuery, response: { 200: DeploymentsList, 422: ErrorBody } },
  }, async (request) => {
    const query = request.query;
    return service.list(request.tenantId, {
      nameContains: query.name_contains ?? undefined,
      status: query.status ?? undefined,
      remoteReconciled: query.remote_reconciled ?? undefined,
      imageVersion: query.image_version ?? undefined,
      deploymentType: query.deployment_type ?? undefined,
      ids: parseIds(query.deployment_ids),
    }, query.limit, query.offset);
  });

  // Bulk delete with partial success. The reference leaves the body unspecified; Berth answers
  // {"deleted": [ids], "failed": [{"deployment_id", "status_code", "detail"}]}: each id (repeats once) is
  // deleted as DELETE /v2/deployments/{id} would, and fails with the status and detail that call would give
  // (404 "Deployment ID … not found." for an unknown id or another workspace's). 200 when every id was
  // deleted, 207 when some were and some failed; when none was, the answer is the first failure itself
  // (a 404 with the single DELETE's body), since there is no partial success to report.
  app.delete<{ Querystring: Static<typeof DeleteDeploymentsQuery> }>('/v2/deployments', {
    schema: {
      tags, summary: 'Delete Deployments',
      description: 'Deletes several deployments: 200 when all were deleted, 207 when some were and some failed.',
      querystring: DeleteDeploymentsQuery, response: { 200: DeleteDeploymentsResult, 207: DeleteDeploymentsResult, ...errors },
    },
  }, async (request, reply) => {
    const { deployment_ids: ids, delete_tracing_project: deleteTracingProject } = request.query;
    const { deleted, failed } = await service.deleteMany(request.tenantId, ids, { deleteTracingProject });
    if (deleted.length === 0 && failed[0]) throw failed[0].error;
    return reply.code(failed.length === 0 ? 200 : 207).send({
      deleted,
      failed: failed.map(({ id, error }) => ({ deployment_id: id, status_code: statusOf(error), detail: error.message })),
    });
  });

  app.get<{ Params: Static<typeof DeploymentParams> }>('/v2/deployments/:deployment_id', {
    schema: { tags, summary: 'Get Deployment', params: DeploymentParams, response: { 200: Deployment, ...errors } },
  }, async (request) => service.get(request.tenantId, request.params.deployment_id));

  app.patch<{ Params: Static<typeof DeploymentParams>; Body: Static<typeof DeploymentPatchRequest> }>('/v2/deployments/:deployment_id', {
    schema: { tags, summary: 'Patch Deployment', params: DeploymentParams, body: DeploymentPatchRequest, response: { 200: Deployment, 400: ErrorBody, ...errors } },
  }, async (request) => service.patch(request.tenantId, request.params.deployment_id, request.body));

  app.delete<{ Params: Static<typeof DeploymentParams>; Querystring: Static<typeof DeleteDeploymentQuery> }>('/v2/deployments/:deployment_id', {
    schema: { tags, summary: 'Delete Deployment', params: DeploymentParams, querystring: DeleteDeploymentQuery, response: { 204: Type.Null(), ...errors } },
  }, async (request, reply) => {
    await service.delete(request.tenantId, request.params.deployment_id, { deleteTracingProject: request.query.delete_tracing_project });
    return reply.code(204).send();
  });

  app.get<{ Params: Static<typeof DeploymentParams>; Querystring: Static<typeof ListRevisionsQuery> }>('/v2/deployments/:deployment_id/revisions', {
    schema: { tags, summary: 'List Revisions', description: 'Lists the revisions of a deployment, newest first.', params: DeploymentParams, querystring: ListRevisionsQuery, response: { 200: RevisionsList, ...errors } },
  }, async (request, reply) => {
    const { limit, offset, status, remote_reconciled: remoteReconciled } = request.query;
    const statuses = parseStatuses(status);
    const deploymentId = request.params.deployment_id;
    // Pages are cached as serialized JSON, keyed by the deployment's revisions version: one primary-key
    // read (which is also the tenant check) answers a repeated listing, and any change makes a new key.
    const version = await service.revisionsVersion(request.tenantId, deploymentId);
    const key = `${deploymentId}:${version}:${limit}:${offset}:${statuses?.join(',') ?? ''}:${remoteReconciled ?? ''}`;
    const page = await revisionPages.getOrLoad(key, async () => {
      const result = await service.listRevisions(request.tenantId, deploymentId, { statuses, remoteReconciled: remoteReconciled ?? undefined }, limit, offset);
      return reply.serialize(result) as string;
    });
    return reply.type('application/json; charset=utf-8').send(page);
  });

  app.get<{ Params: Static<typeof RevisionParams> }>('/v2/deployments/:deployment_id/revisions/:revision_id', {
    schema: { tags, summary: 'Get Revision', params: RevisionParams, response: { 200: Revision, ...errors } },
  }, async (request) => service.getRevision(request.tenantId, request.params.deployment_id, request.params.revision_id));

  app.post<{ Params: Static<typeof RevisionParams> }>('/v2/deployments/:deployment_id/revisions/:revision_id/redeploy', {
    schema: { tags, summary: 'Redeploy Revision', description: 'Creates a new revision from this one (its configuration and commit): a rollback.', params: RevisionParams, response: { 200: Deployment, 400: ErrorBody, ...errors } },
    config: { bodyOptional: true },
  }, async (request) => service.redeploy(request.tenantId, request.params.deployment_id, request.params.revision_id));

  app.post<{ Params: Static<typeof RevisionParams> }>('/v2/deployments/:deployment_id/revisions/:revision_id/interrupt', {
    schema: { tags, summary: 'Interrupt Revision', description: 'Stops a revision stuck in progress: it becomes INTERRUPTED and its build is killed.', params: RevisionParams, response: { 200: Revision, 400: ErrorBody, ...errors } },
    config: { bodyOptional: true },
  }, async (request) => service.interrupt(request.tenantId, request.params.deployment_id, request.params.revision_id));

  app.get<{ Params: Static<typeof RevisionParams>; Querystring: Static<typeof LogsQuery> }>('/v2/deployments/:deployment_id/revisions/:revision_id/logs', {
    schema: { tags, summary: 'Read Build Logs', description: 'Build log lines of a revision; readable while the build runs.', params: RevisionParams, querystring: LogsQuery, response: { 200: LogsPage, ...errors } },
  }, async (request) => service.readLogs(request.tenantId, request.params.deployment_id, request.params.revision_id, request.query));

  // The official CLIs read build logs here (project id = deployment id).
  app.post<{ Params: { project_id: string; revision_id: string }; Body: Static<typeof LogsRequestBody> | undefined }>('/v1/projects/:project_id/revisions/:revision_id/build_logs', {
    schema: {
      tags, summary: 'Read Build Logs (CLI)',
      params: Type.Object({ project_id: Type.String({ format: 'uuid' }), revision_id: Type.String({ format: 'uuid' }) }),
      body: LogsRequestBody, response: { 200: LogsPage, ...errors },
    },
    config: { bodyOptional: true },
  }, async (request) => {
    const body = request.body ?? {};
    return service.readLogs(request.tenantId, request.params.project_id, request.params.revision_id, {
      offset: body.offset ?? 0, limit: body.limit ?? 100, order: body.order ?? 'asc', level: body.level, query: body.query,
    });
  });

  app.post<{ Params: Static<typeof RevisionParams>; Body: Static<typeof DeployReport> }>('/v2/deployments/:deployment_id/revisions/:revision_id/deploy-status', {
    schema: { tags: ['Data plane'], summary: 'Report Deploy Status', description: 'Called by a data plane: DEPLOYING, then DEPLOYED (with url) or DEPLOY_FAILED.', params: RevisionParams, body: DeployReport, response: { 200: Revision, 400: ErrorBody, ...errors } },
    config: { admin: true },
  }, async (request) => dataPlane.report(request.tenantId, request.params.deployment_id, request.params.revision_id, request.body));
}
