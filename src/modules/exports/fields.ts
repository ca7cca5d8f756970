// The 29 exportable fields of the spec, in table order, and what kind of value each one holds.
// The kind decides the Parquet column type of each format version (decisions.md).

export type FieldKind = 'uuid' | 'string' | 'timestamp' | 'boolean' | 'int' | 'decimal' | 'json' | 'list';

export const FIELD_KINDS = {
  id: 'uuid',
  tenant_id: 'uuid',
  session_id: 'uuid',
  trace_id: 'uuid',
  parent_run_id: 'uuid',
  parent_run_ids: 'list',
  reference_example_id: 'uuid',
  name: 'string',
  run_type: 'string',
  start_time: 'timestamp',
  end_time: 'timestamp',
  status: 'string',
  is_root: 'boolean',
  dotted_order: 'string',
  trace_tier: 'string',
  inputs: 'json',
  outputs: 'json',
  error: 'string',
  extra: 'json',
  events: 'json',
  tags: 'list',
  feedback_stats: 'json',
  total_tokens: 'int',
  prompt_tokens: 'int',
  completion_tokens: 'int',
  total_cost: 'decimal',
  prompt_cost: 'decimal',
  completion_cost: 'decimal',
  first_token_time: 'timestamp',
} as const satisfies Record<string, FieldKind>;

export type ExportField = keyof typeof FIELD_KINDS;

export const EXPORT_FIELDS = Object.keys(FIELD_KINDS) as readonly ExportField[];

export function isExportField(name: string): name is ExportField {
  return Object.hasOwn(FIELD_KINDS, name);
}
