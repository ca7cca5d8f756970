// Request and response schemas of the trace store routes (the source of their OpenAPI and of 422s).
import { Type, type TSchema } from '@sinclair/typebox';
import { QUERYABLE_FIELDS } from './run-fields.ts';

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const optionalNullable = <T extends TSchema>(schema: T) => Type.Optional(nullable(schema));
const Uuid = Type.String({ format: 'uuid' });
const Json = Type.Unknown();

export const ErrorBody = Type.Object({ detail: Type.Unknown() });
export const Accepted = Type.Object({}, { additionalProperties: true });

export const ServerInfo = Type.Object({
  version: Type.String(),
  license_expiration_time: Type.Null(),
  batch_ingest_config: Type.Object({
    use_multipart_endpoint: Type.Boolean(),
    size_limit_bytes: Type.Integer(),
    size_limit: Type.Integer(),
    scale_up_qsize_trigger: Type.Integer(),
    scale_up_nthreads_limit: Type.Integer(),
    scale_down_nempty_trigger: Type.Integer(),
  }),
  instance_flags: Type.Record(Type.String(), Type.Unknown()),
});

/** A run as the SDK sends it; each field is checked by the ingest rules so that bad runs are named one by one. */
export const RunBody = Type.Object({}, { additionalProperties: true, description: 'A run (RunCreate / RunUpdate of the langsmith SDK).' });
export const BatchBody = Type.Object({
  post: optionalNullable(Type.Array(Json)),
  patch: optionalNullable(Type.Array(Json)),
});
export const RunParams = Type.Object({ run_id: Uuid });
export const AttachmentParams = Type.Object({ run_id: Uuid, name: Type.String({ minLength: 1, maxLength: 255 }) });

export const RunQueryBody = Type.Object({
  session: optionalNullable(Type.Array(Uuid, { maxItems: 100 })),
  id: optionalNullable(Type.Array(Uuid, { maxItems: 1000 })),
  trace: optionalNullable(Uuid),
  parent_run: optionalNullable(Uuid),
  reference_example: optionalNullable(Type.Array(Uuid, { maxItems: 100 })),
  run_type: optionalNullable(Type.String({ maxLength: 64 })),
  error: optionalNullable(Type.Boolean()),
  is_root: optionalNullable(Type.Boolean()),
  start_time: optionalNullable(Type.String()),
  end_time: optionalNullable(Type.String()),
  filter: optionalNullable(Type.String()),
  trace_filter: optionalNullable(Type.String()),
  tree_filter: optionalNullable(Type.String()),
  select: optionalNullable(Type.Array(Type.Union(QUERYABLE_FIELDS.map((field) => Type.Literal(field))))),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 100 }),
  cursor: optionalNullable(Type.String({ maxLength: 1000 })),
  order: Type.Union([Type.Literal('desc'), Type.Literal('asc')], { default: 'desc' }),
});

export const RunPage = Type.Object({
  runs: Type.Array(Type.Record(Type.String(), Type.Unknown())),
  cursors: Type.Object({ next: nullable(Type.String()), prev: nullable(Type.String()) }),
});

export const SessionCreate = Type.Object({
  id: optionalNullable(Uuid),
  name: Type.String({ minLength: 1, maxLength: 1024 }),
  description: optionalNullable(Type.String()),
  extra: optionalNullable(Type.Record(Type.String(), Type.Unknown())),
  reference_dataset_id: optionalNullable(Uuid),
  start_time: optionalNullable(Type.String({ format: 'date-time' })),
  end_time: optionalNullable(Type.String({ format: 'date-time' })),
});
export const SessionPatch = Type.Object({
  name: optionalNullable(Type.String({ minLength: 1, maxLength: 1024 })),
  description: optionalNullable(Type.String()),
  extra: optionalNullable(Type.Record(Type.String(), Type.Unknown())),
  end_time: optionalNullable(Type.String({ format: 'date-time' })),
});
export const SessionCreateQuery = Type.Object({ upsert: Type.Boolean({ default: false }) });
export const SessionParams = Type.Object({ session_id: Uuid });
export const SessionListQuery = Type.Object({
  name: optionalNullable(Type.String()),
  name_contains: optionalNullable(Type.String()),
  reference_dataset: optionalNullable(Uuid),
  id: optionalNullable(Type.String({ description: 'comma-separated project ids' })),
  include_stats: Type.Optional(Type.Boolean()),
  offset: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 100 }),
});
export const Session = Type.Object({
  id: Uuid,
  tenant_id: Uuid,
  name: Type.String(),
  description: nullable(Type.String()),
  extra: nullable(Type.Record(Type.String(), Type.Unknown())),
  reference_dataset_id: nullable(Uuid),
  start_time: Type.String(),
  end_time: nullable(Type.String()),
  run_count: Type.Integer(),
  last_run_start_time: nullable(Type.String()),
});

export const FeedbackCreate = Type.Object({
  id: optionalNullable(Uuid),
  run_id: Uuid,
  session_id: optionalNullable(Uuid),
  key: Type.String({ minLength: 1, maxLength: 512 }),
  score: Type.Optional(Type.Unknown({ description: 'number or boolean' })),
  value: Type.Optional(Json),
  comment: optionalNullable(Type.String()),
  correction: Type.Optional(Json),
  feedback_source: Type.Optional(Json),
});
export const FeedbackParams = Type.Object({ feedback_id: Uuid });
export const FeedbackListQuery = Type.Object({
  run: optionalNullable(Type.String({ description: 'comma-separated run ids' })),
  key: optionalNullable(Type.String({ description: 'comma-separated keys' })),
  offset: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 100 }),
});
