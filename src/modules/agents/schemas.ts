// Request schemas of the agent server (validation in pydantic style and the OpenAPI document).
// Responses are left unserialized by schema: graph state is free-form JSON.
import { Type, type TLiteral, type TSchema, type TUnion } from '@sinclair/typebox';

const opt = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const Obj = Type.Object({}, { additionalProperties: true });
const Any = Type.Optional(Type.Unknown());
function Literal<const T extends string[]>(...values: T) {
  return Type.Union(values.map((value) => Type.Literal(value))) as unknown as TUnion<{ [K in keyof T]: TLiteral<T[K]> }>;
}
const SortOrder = Literal('asc', 'desc');
const Limit = (fallback: number) => Type.Integer({ minimum: 1, maximum: 1000, default: fallback });
const Offset = Type.Integer({ minimum: 0, default: 0 });

export const ErrorBody = Type.Object({ detail: Type.Unknown() });
export const Uuid = Type.String({ format: 'uuid' });

export const AssistantIdParams = Type.Object({ assistant_id: Type.String() });
export const ThreadIdParams = Type.Object({ thread_id: Uuid });
export const ThreadRunParams = Type.Object({ thread_id: Uuid, run_id: Uuid });
export const RunIdParams = Type.Object({ run_id: Uuid });
export const CheckpointParams = Type.Object({ thread_id: Uuid, checkpoint_id: Type.String() });
export const CronIdParams = Type.Object({ cron_id: Uuid });

export const AssistantCreate = Type.Object({
  assistant_id: opt(Uuid),
  graph_id: Type.String(),
  config: opt(Obj),
  context: opt(Obj),
  metadata: opt(Obj),
  if_exists: opt(Literal('raise', 'do_nothing')),
  name: opt(Type.String()),
  description: opt(Type.String()),
});

export const AssistantPatch = Type.Object({
  graph_id: opt(Type.String()),
  config: opt(Obj),
  context: opt(Obj),
  metadata: opt(Obj),
  name: opt(Type.String()),
  description: opt(Type.String()),
});

export const AssistantSearch = Type.Object({
  metadata: opt(Obj),
  graph_id: opt(Type.String()),
  name: opt(Type.String()),
  limit: Limit(10),
  offset: Offset,
  sort_by: opt(Literal('assistant_id', 'graph_id', 'name', 'created_at', 'updated_at')),
  sort_order: opt(SortOrder),
  select: opt(Type.Array(Type.String())),
});

export const AssistantCount = Type.Object({ metadata: opt(Obj), graph_id: opt(Type.String()), name: opt(Type.String()) });
export const AssistantVersionsSearch = Type.Object({ metadata: opt(Obj), limit: Limit(10), offset: Offset });
export const AssistantLatest = Type.Object({ version: Type.Integer({ minimum: 1 }) });
export const DeleteAssistantQuery = Type.Object({ delete_threads: Type.Boolean({ default: false }) });
export const GraphQuery = Type.Object({ xray: Type.Optional(Type.Union([Type.Boolean(), Type.Integer()])) });
export const SubgraphQuery = Type.Object({ recurse: Type.Boolean({ default: false }) });

const ThreadStatus = Literal('idle', 'busy', 'interrupted', 'error');

export const ThreadCreate = Type.Object({
  thread_id: opt(Uuid),
  metadata: opt(Obj),
  if_exists: opt(Literal('raise', 'do_nothing')),
  supersteps: opt(Type.Array(Type.Object({ updates: Type.Array(Type.Object({ values: Any, command: Any, as_node: Type.String() })) }))),
  ttl: Any,
});

export const ThreadPatch = Type.Object({ metadata: opt(Obj), ttl: Any });

export const ThreadSearch = Type.Object({
  metadata: opt(Obj),
  ids: opt(Type.Array(Uuid)),
  values: opt(Obj),
  status: opt(ThreadStatus),
  limit: Limit(10),
  offset: Offset,
  sort_by: opt(Literal('thread_id', 'status', 'created_at', 'updated_at', 'state_updated_at')),
  sort_order: opt(SortOrder),
  select: opt(Type.Array(Type.String())),
});

export const ThreadCount = Type.Object({ metadata: opt(Obj), values: opt(Obj), status: opt(ThreadStatus) });
export const ThreadPrune = Type.Object({ thread_ids: Type.Array(Uuid), strategy: Literal('delete', 'keep_latest') });
export const StateQuery = Type.Object({ subgraphs: Type.Boolean({ default: false }) });
export const StateUpdate = Type.Object({ values: Any, as_node: opt(Type.String()), checkpoint_id: opt(Type.String()), checkpoint: opt(Obj) });
export const StatePatch = Type.Object({ metadata: Obj });
export const StateCheckpoint = Type.Object({ checkpoint: Obj, subgraphs: opt(Type.Boolean()) });
export const HistoryBody = Type.Object({ limit: Limit(10), before: Any, metadata: opt(Obj), checkpoint: opt(Obj) });
export const HistoryQuery = Type.Object({ limit: Limit(10), before: Type.Optional(Type.String()) });

export const RunCreate = Type.Object({
  assistant_id: Type.String(),
  input: Any,
  command: opt(Type.Object({ update: Any, resume: Any, goto: Any })),
  checkpoint_id: opt(Type.String()),
  checkpoint: opt(Obj),
  metadata: opt(Obj),
  config: opt(Obj),
  context: opt(Obj),
  webhook: opt(Type.String()),
  interrupt_before: Any,
  interrupt_after: Any,
  on_disconnect: opt(Literal('cancel', 'continue')),
  multitask_strategy: opt(Literal('reject', 'rollback', 'interrupt', 'enqueue')),
  stream_mode: Any,
  stream_subgraphs: opt(Type.Boolean()),
  stream_resumable: opt(Type.Boolean()),
  after_seconds: opt(Type.Number({ minimum: 0 })),
  if_not_exists: opt(Literal('reject', 'create')),
  on_completion: opt(Literal('delete', 'keep')),
  feedback_keys: opt(Type.Array(Type.String())),
  durability: opt(Literal('sync', 'async', 'exit')),
  checkpoint_during: opt(Type.Boolean()),
  langsmith_tracer: Any,
});

export const RunBatch = Type.Array(RunCreate, { minItems: 1 });
export const RunListQuery = Type.Object({ limit: Limit(10), offset: Offset, status: Type.Optional(Type.String()) });
export const CancelQuery = Type.Object({ wait: Type.Boolean({ default: false }), action: Literal('interrupt', 'rollback') });
export const JoinStreamQuery = Type.Object({ cancel_on_disconnect: Type.Boolean({ default: false }), stream_mode: Type.Optional(Type.String()) });
export const ThreadStreamQuery = Type.Object({ stream_mode: Type.Optional(Type.String()) });
export const BulkCancel = Type.Object({ thread_id: opt(Uuid), run_ids: opt(Type.Array(Uuid)), status: opt(Literal('pending', 'running', 'all')) });
export const BulkCancelQuery = Type.Object({ action: Literal('interrupt', 'rollback') });

export const StorePut = Type.Object({ namespace: Type.Array(Type.String()), key: Type.String(), value: Obj, index: Any, ttl: opt(Type.Number()) });
export const StoreGetQuery = Type.Object({ namespace: Type.Optional(Type.String()), key: Type.String(), refresh_ttl: Type.Optional(Type.Boolean()) });
export const StoreDelete = Type.Object({ namespace: opt(Type.Array(Type.String())), key: Type.String() });
export const StoreSearch = Type.Object({
  namespace_prefix: opt(Type.Array(Type.String())),
  filter: opt(Obj),
  limit: Limit(10),
  offset: Offset,
  query: opt(Type.String()),
  refresh_ttl: opt(Type.Boolean()),
});
export const StoreNamespaces = Type.Object({
  prefix: opt(Type.Array(Type.String())),
  suffix: opt(Type.Array(Type.String())),
  max_depth: opt(Type.Integer({ minimum: 1 })),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  offset: Offset,
});

export const CronCreate = Type.Object({
  schedule: Type.String(),
  assistant_id: Type.String(),
  input: Any,
  config: opt(Obj),
  context: opt(Obj),
  metadata: opt(Obj),
  interrupt_before: Any,
  interrupt_after: Any,
  webhook: opt(Type.String()),
  multitask_strategy: opt(Literal('reject', 'rollback', 'interrupt', 'enqueue')),
  durability: opt(Literal('sync', 'async', 'exit')),
  enabled: opt(Type.Boolean()),
  timezone: opt(Type.String()),
  stream_mode: Any,
  stream_subgraphs: opt(Type.Boolean()),
  stream_resumable: opt(Type.Boolean()),
  end_time: opt(Type.String()),
  on_run_completed: opt(Literal('delete', 'keep')),
});
export const CronPatch = Type.Partial(Type.Object({ ...CronCreate.properties, assistant_id: Type.Optional(Type.Unknown()) }));
export const CronSearch = Type.Object({
  assistant_id: opt(Type.String()),
  thread_id: opt(Uuid),
  enabled: opt(Type.Boolean()),
  limit: Limit(10),
  offset: Offset,
  sort_by: opt(Literal('cron_id', 'assistant_id', 'thread_id', 'created_at', 'updated_at', 'next_run_date')),
  sort_order: opt(SortOrder),
  select: opt(Type.Array(Type.String())),
  metadata: opt(Obj),
});
export const CronCount = Type.Object({ assistant_id: opt(Type.String()), thread_id: opt(Uuid), metadata: opt(Obj) });
