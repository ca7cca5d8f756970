// Request and response schemas of the control plane: the source of validation and of OpenAPI.
import { Type, type Static, type TSchema } from '@sinclair/typebox';

export const REVISION_STATUSES = [
  'CREATING', 'QUEUED', 'AWAITING_BUILD', 'BUILDING', 'AWAITING_DEPLOY', 'DEPLOYING', 'CREATE_FAILED',
  'BUILD_FAILED', 'DEPLOY_FAILED', 'DEPLOYED', 'SKIPPED', 'INTERRUPTED', 'UNKNOWN',
] as const;
export type RevisionStatus = (typeof REVISION_STATUSES)[number];

/** States a revision never leaves. */
export const FINAL_REVISION_STATUSES: ReadonlySet<RevisionStatus> = new Set([
  'CREATE_FAILED', 'BUILD_FAILED', 'DEPLOY_FAILED', 'DEPLOYED', 'SKIPPED', 'INTERRUPTED', 'UNKNOWN',
]);

/** In-progress states a newer revision supersedes (deploying ones finish first). */
export const SUPERSEDABLE_REVISION_STATUSES: readonly RevisionStatus[] = ['CREATING', 'QUEUED', 'AWAITING_BUILD', 'BUILDING', 'AWAITING_DEPLOY'];

export const SOURCES = ['git_hosting', 'external_container'] as const;
export type Source = (typeof SOURCES)[number];
/** Public names accepted as input aliases; answers always use the neutral names. */
export const SOURCE_ALIASES: Record<string, Source> = { github: 'git_hosting', external_docker: 'external_container' };

export const DEPLOYMENT_STATUSES = ['AWAITING_DATABASE', 'READY', 'UNUSED', 'AWAITING_DELETE', 'UNKNOWN'] as const;
export const DEPLOYMENT_TYPES = ['dev_free', 'dev', 'prod'] as const;

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const optionalNullable = <T extends TSchema>(schema: T) => Type.Optional(nullable(schema));
const literals = <T extends readonly string[]>(values: T) => Type.Union(values.map((value) => Type.Literal(value)));
const Uuid = Type.String({ format: 'uuid' });
const DateTime = Type.String({ format: 'date-time' });

const CpuRange = (max: number) => optionalNullable(Type.Number({ minimum: 0.1, maximum: max }));
const Count = optionalNullable(Type.Integer({ minimum: 0 }));

export const ResourceSpec = Type.Object({
  min_scale: Count, max_scale: Count,
  cpu: CpuRange(8), cpu_limit: CpuRange(16), memory_mb: Count, memory_limit_mb: Count,
  queue_min_scale: Count, queue_max_scale: Count, queue_cpu: CpuRange(8), queue_cpu_limit: CpuRange(16),
  queue_memory_mb: Count, queue_memory_limit_mb: Count,
  redis_cpu: CpuRange(8), redis_cpu_limit: CpuRange(16), redis_memory_mb: Count, redis_memory_limit_mb: Count,
  db_cpu: CpuRange(8), db_cpu_limit: CpuRange(16), db_memory_mb: Count, db_memory_limit_mb: Count,
  db_storage_gi: Count, db_max_connections: Count,
}, { additionalProperties: true });

export const SourceConfig = Type.Object({
  integration_id: optionalNullable(Uuid),
  repo_url: optionalNullable(Type.String({ minLength: 1 })),
  deployment_type: optionalNullable(literals(DEPLOYMENT_TYPES)),
  build_on_push: optionalNullable(Type.Boolean()),
  custom_url: optionalNullable(Type.String()),
  resource_spec: optionalNullable(ResourceSpec),
  listener_id: optionalNullable(Uuid),
  listener_config: optionalNullable(Type.Object({ k8s_namespace: optionalNullable(Type.String()) })),
  install_command: optionalNullable(Type.String()),
  build_command: optionalNullable(Type.String()),
});
export type SourceConfig = Static<typeof SourceConfig>;

export const SourceRevisionConfigRequest = Type.Object({
  repo_ref: optionalNullable(Type.String({ minLength: 1 })),
  graph_config_path: optionalNullable(Type.String({ minLength: 1 })),
  image_uri: optionalNullable(Type.String({ minLength: 1 })),
});
export type SourceRevisionConfigRequest = Static<typeof SourceRevisionConfigRequest>;

export const SourceRevisionConfig = Type.Object({
  repo_ref: nullable(Type.String()),
  graph_config_path: nullable(Type.String()),
  image_uri: nullable(Type.String()),
  repo_commit_sha: nullable(Type.String()),
});

export const SecretInput = Type.Object({ name: Type.String({ minLength: 1, pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }), value: Type.String() });
export const SecretName = Type.Object({ name: Type.String() });

const SourceInput = literals([...SOURCES, ...Object.keys(SOURCE_ALIASES)]);

export const DeploymentCreateRequest = Type.Object({
  // Also the name of its tracing project, which must not be blank.
  name: Type.String({ minLength: 1, maxLength: 128, pattern: '\\S' }),
  source: SourceInput,
  source_config: SourceConfig,
  source_revision_config: SourceRevisionConfigRequest,
  secrets: Type.Array(SecretInput, { maxItems: 200 }),
});
export type DeploymentCreateRequest = Static<typeof DeploymentCreateRequest>;

export const DeploymentPatchRequest = Type.Object({
  revision_source: optionalNullable(SourceInput),
  source_config: optionalNullable(SourceConfig),
  source_revision_config: optionalNullable(SourceRevisionConfigRequest),
  secrets: optionalNullable(Type.Array(SecretInput, { maxItems: 200 })),
});
export type DeploymentPatchRequest = Static<typeof DeploymentPatchRequest>;

export const Deployment = Type.Object({
  name: Type.String(),
  source: literals(SOURCES),
  source_config: Type.Object({}, { additionalProperties: true }),
  source_revision_config: SourceRevisionConfig,
  secrets: Type.Array(SecretName),
  id: Uuid,
  tenant_id: Uuid,
  created_at: DateTime,
  updated_at: DateTime,
  status: literals(DEPLOYMENT_STATUSES),
  latest_revision_id: nullable(Uuid),
  active_revision_id: nullable(Uuid),
  image_version: nullable(Type.String()),
  url: nullable(Type.String()),
});

export const Revision = Type.Object({
  id: Uuid,
  deployment_id: Uuid,
  created_at: DateTime,
  updated_at: DateTime,
  status: literals(REVISION_STATUSES),
  source: literals(SOURCES),
  source_revision_config: SourceRevisionConfig,
  remote_reconciled: Type.Boolean(),
  status_message: nullable(Type.String()),
});

export const RevisionsList = Type.Object({ resources: Type.Array(Revision), offset: Type.Integer() });
export const DeploymentsList = Type.Object({ resources: Type.Array(Deployment), offset: Type.Integer() });

export const Pagination = {
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Maximum number of resources to return.' }),
  offset: Type.Integer({ minimum: 0, default: 0, description: 'Pagination offset. Pass this value to subsequent requests to fetch the next page.' }),
};

export const ListRevisionsQuery = Type.Object({
  ...Pagination,
  status: optionalNullable(Type.String({ description: `Comma separated list of revision status (${REVISION_STATUSES.join(', ')}) fields to filter by.` })),
  remote_reconciled: optionalNullable(Type.Boolean({ description: 'Flag to filter by remote reconciled revisions.' })),
});

export const ListDeploymentsQuery = Type.Object({
  ...Pagination,
  name_contains: optionalNullable(Type.String({ description: 'Name of the deployment to filter by.' })),
  status: optionalNullable(Type.String({ description: '`status` of the deployment to filter by.' })),
  remote_reconciled: optionalNullable(Type.Boolean({ description: 'Flag to filter by remote reconciled deployments.' })),
  image_version: optionalNullable(Type.String()),
  deployment_type: optionalNullable(literals(DEPLOYMENT_TYPES)),
  deployment_ids: optionalNullable(Type.String({ description: 'Comma separated deployment IDs.' })),
});

export const DeploymentParams = Type.Object({ deployment_id: Type.String({ format: 'uuid', title: 'Deployment ID' }) });
export const RevisionParams = Type.Object({
  deployment_id: Type.String({ format: 'uuid', title: 'Deployment ID' }),
  revision_id: Type.String({ format: 'uuid', title: 'Revision ID' }),
});
const DeleteTracingProject = Type.Boolean({ default: false, description: 'Also delete the tracing project of the deployment name.' });
export const DeleteDeploymentQuery = Type.Object({ delete_tracing_project: DeleteTracingProject });
/** `?deployment_ids=a&deployment_ids=b` (a FastAPI list query parameter: one key per id). */
export const DeleteDeploymentsQuery = Type.Object({
  deployment_ids: Type.Array(Uuid, { maxItems: 100, title: 'Deployment Ids' }),
  delete_tracing_project: DeleteTracingProject,
});
export const DeleteDeploymentsResult = Type.Object({
  deleted: Type.Array(Uuid),
  failed: Type.Array(Type.Object({ deployment_id: Uuid, status_code: Type.Integer(), detail: Type.String() })),
});

export const LogsQuery = Type.Object({
  offset: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  order: Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'asc' }),
});
export const LogsRequestBody = Type.Object({
  order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
  level: optionalNullable(Type.String()),
  query: optionalNullable(Type.String()),
});
export const LogsPage = Type.Object({
  logs: Type.Array(Type.Object({ timestamp: DateTime, level: Type.String(), message: Type.String() })),
  next_offset: nullable(Type.Integer()),
});

export const DeployReport = Type.Object({
  status: Type.Union([Type.Literal('DEPLOYING'), Type.Literal('DEPLOYED'), Type.Literal('DEPLOY_FAILED')]),
  url: optionalNullable(Type.String()),
  message: optionalNullable(Type.String()),
});

// Listeners (self-hosted data planes). compute_type is the const "k8s", as in the reference.
export const ListenerComputeConfig = Type.Object({
  k8s_namespaces: optionalNullable(Type.Array(Type.String({ minLength: 1 }), { description: 'Kubernetes namespaces the listener serves.' })),
});
export type ListenerComputeConfig = Static<typeof ListenerComputeConfig>;

export const ListenerCreateRequest = Type.Object({
  version: optionalNullable(Type.String()),
  compute_type: Type.Literal('k8s'),
  compute_id: Type.String({ minLength: 1, maxLength: 253, description: 'User-assigned id of the compute, e.g. the Kubernetes cluster name; unique in the workspace.' }),
  compute_config: ListenerComputeConfig,
});
export type ListenerCreateRequest = Static<typeof ListenerCreateRequest>;

export const ListenerPatchRequest = Type.Object({
  version: optionalNullable(Type.String()),
  compute_config: optionalNullable(ListenerComputeConfig),
});
export type ListenerPatchRequest = Static<typeof ListenerPatchRequest>;

export const Listener = Type.Object({
  version: nullable(Type.String()),
  compute_type: Type.Literal('k8s'),
  compute_id: Type.String(),
  compute_config: Type.Object({ k8s_namespaces: nullable(Type.Array(Type.String())) }),
  id: Uuid,
  created_at: DateTime,
  updated_at: DateTime,
});
export const ListenersList = Type.Object({ resources: Type.Array(Listener), offset: Type.Integer() });
export const ListListenersQuery = Type.Object({ ...Pagination });
export const ListenerParams = Type.Object({ listener_id: Type.String({ format: 'uuid', title: 'Listener ID' }) });

export const ErrorBody = Type.Object({ detail: Type.Unknown() });
