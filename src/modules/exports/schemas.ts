// Request and response schemas of the bulk export API: the source of validation and of OpenAPI.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { EXPORT_FIELDS } from './fields.ts';

export const EXPORT_STATUSES = ['CREATED', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMEDOUT'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];
export const FINAL_STATUSES: readonly ExportStatus[] = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEDOUT'];
export const ACTIVE_STATUSES: readonly ExportStatus[] = ['CREATED', 'RUNNING'];

export const FORMAT_VERSIONS = ['v1', 'v2_beta'] as const;
export type FormatVersion = (typeof FORMAT_VERSIONS)[number];
export const COMPRESSIONS = ['zstd', 'snappy', 'gzip', 'none'] as const;
export type Compression = (typeof COMPRESSIONS)[number];
/** Public name of zstd accepted as input. */
export const COMPRESSION_ALIASES: Record<string, Compression> = { zstandard: 'zstd' };

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const optionalNullable = <T extends TSchema>(schema: T) => Type.Optional(nullable(schema));
const literals = <T extends readonly string[]>(values: T) => Type.Union(values.map((value) => Type.Literal(value)));
const Uuid = Type.String({ format: 'uuid' });
const DateTime = Type.String({ format: 'date-time' });

export const ErrorBody = Type.Object({ detail: Type.Unknown() });

// ---- destinations

export const S3ConfigRequest = Type.Object({
  bucket_name: Type.String({ minLength: 1, maxLength: 255 }),
  prefix: Type.Optional(Type.String({ maxLength: 1024 })),
  region: optionalNullable(Type.String({ maxLength: 64 })),
  endpoint_url: optionalNullable(Type.String({ maxLength: 2048 })),
  include_bucket_in_prefix: optionalNullable(Type.Boolean()),
});
export type S3ConfigRequest = Static<typeof S3ConfigRequest>;

export const CredentialsRequest = Type.Object({
  access_key_id: Type.String({ minLength: 1, maxLength: 256 }),
  secret_access_key: Type.String({ minLength: 1, maxLength: 1024 }),
  session_token: optionalNullable(Type.String({ maxLength: 8192 })),
});
export type CredentialsRequest = Static<typeof CredentialsRequest>;

export const DestinationCreateRequest = Type.Object({
  destination_type: Type.Optional(Type.Literal('s3')),
  display_name: Type.String({ minLength: 1, maxLength: 255 }),
  config: S3ConfigRequest,
  credentials: optionalNullable(CredentialsRequest),
});
export type DestinationCreateRequest = Static<typeof DestinationCreateRequest>;

export const DestinationPatchRequest = Type.Object({
  display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  credentials: optionalNullable(CredentialsRequest),
});
export type DestinationPatchRequest = Static<typeof DestinationPatchRequest>;

export const Destination = Type.Object({
  id: Uuid,
  tenant_id: Uuid,
  display_name: Type.String(),
  destination_type: Type.Literal('s3'),
  config: Type.Object({
    bucket_name: Type.String(),
    prefix: Type.String(),
    region: nullable(Type.String()),
    endpoint_url: nullable(Type.String()),
    include_bucket_in_prefix: Type.Boolean(),
  }),
  credentials_keys: Type.Array(Type.String()),
  created_at: DateTime,
  updated_at: DateTime,
});

export const DestinationParams = Type.Object({ destination_id: Type.String({ format: 'uuid', title: 'Destination ID' }) });

// ---- exports

export const ExportCreateRequest = Type.Object({
  bulk_export_destination_id: Uuid,
  session_id: Uuid,
  start_time: DateTime,
  end_time: optionalNullable(DateTime),
  filter: optionalNullable(Type.String({ maxLength: 10_000 })),
  format: Type.Optional(Type.Literal('Parquet')),
  format_version: optionalNullable(literals(FORMAT_VERSIONS)),
  compression: optionalNullable(literals([...COMPRESSIONS, ...Object.keys(COMPRESSION_ALIASES)])),
  interval_hours: optionalNullable(Type.Integer({ minimum: 1, maximum: 168 })),
  export_fields: optionalNullable(Type.Array(literals(EXPORT_FIELDS), { minItems: 1, maxItems: EXPORT_FIELDS.length })),
});
export type ExportCreateRequest = Static<typeof ExportCreateRequest>;

export const ExportPatchRequest = Type.Object({ status: Type.String() });

export const Export = Type.Object({
  bulk_export_destination_id: Uuid,
  session_id: Uuid,
  start_time: DateTime,
  end_time: nullable(DateTime),
  filter: nullable(Type.String()),
  format: Type.Literal('Parquet'),
  format_version: literals(FORMAT_VERSIONS),
  compression: literals(COMPRESSIONS),
  interval_hours: nullable(Type.Integer()),
  export_fields: nullable(Type.Array(Type.String())),
  id: Uuid,
  tenant_id: Uuid,
  status: literals(EXPORT_STATUSES),
  created_at: DateTime,
  updated_at: DateTime,
  finished_at: nullable(DateTime),
  source_bulk_export_id: nullable(Uuid),
  progress: Type.Object({
    runs_total: Type.Integer(),
    runs_completed: Type.Integer(),
    rows_written: Type.Integer(),
    files_written: Type.Integer(),
  }),
});

export const ExportParams = Type.Object({ bulk_export_id: Type.String({ format: 'uuid', title: 'Bulk Export ID' }) });
export const ExportRunParams = Type.Object({
  bulk_export_id: Type.String({ format: 'uuid', title: 'Bulk Export ID' }),
  run_id: Type.String({ format: 'uuid', title: 'Run ID' }),
});

export const ExportRun = Type.Object({
  id: Uuid,
  bulk_export_id: Uuid,
  status: literals(EXPORT_STATUSES),
  created_at: DateTime,
  updated_at: DateTime,
  finished_at: nullable(DateTime),
  retry_number: Type.Integer(),
  errors: Type.Record(Type.String(), Type.String()),
  start_time: DateTime,
  end_time: DateTime,
  metadata: Type.Object({
    prefix: Type.String(),
    start_time: DateTime,
    end_time: DateTime,
    result: Type.Object({
      rows_written: Type.Integer(),
      exported_files: Type.Array(Type.String()),
      export_path: Type.String(),
      latest_cursor: nullable(Type.String()),
    }),
  }),
});
