import type { Comparator } from './ast.ts';

/**
 * How an attribute is stored and compared. The compiler switches on this, so adding an attribute of an
 * existing kind is a one-line change here.
 */
export type AttributeKind =
  | 'uuid'
  | 'text'
  | 'error'
  | 'timestamp'
  | 'latency'
  | 'number'
  | 'boolean'
  | 'tags'
  | 'metadata'
  | 'entryKey'
  | 'entryValue'
  | 'feedbackScore';

/** Where the key/value attributes look: the metadata object, the top level of inputs/outputs, or feedback. */
export type EntrySource = 'metadata' | 'inputs' | 'outputs' | 'feedback';

export interface AttributeSpec {
  name: string;
  kind: AttributeKind;
  /** Column of the runs table; absent for computed or joined attributes. */
  column?: string;
  nullable: boolean;
  ops: readonly Comparator[];
  source?: EntrySource;
}

const ORDERED = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte'] as const;
const TEXT_OPS = ['eq', 'neq', 'in', 'like', 'search'] as const;

function uuid(name: string, nullable: boolean): AttributeSpec {
  return { name, kind: 'uuid', column: name, nullable, ops: nullable ? ['eq', 'neq', 'in', 'exists'] : ['eq', 'neq', 'in'] };
}
function text(name: string): AttributeSpec {
  return { name, kind: 'text', column: name, nullable: false, ops: TEXT_OPS };
}
function timestamp(name: string, nullable: boolean): AttributeSpec {
  return { name, kind: 'timestamp', column: name, nullable, ops: nullable ? [...ORDERED, 'exists'] : ORDERED };
}
function numeric(name: string): AttributeSpec {
  return { name, kind: 'number', column: name, nullable: true, ops: [...ORDERED, 'in', 'exists'] };
}
function entryKey(name: string, source: EntrySource): AttributeSpec {
  return { name, kind: 'entryKey', nullable: false, ops: TEXT_OPS, source };
}
function entryValue(name: string, source: EntrySource): AttributeSpec {
  // Nullable because JSON null values come out of jsonb_each_text as SQL NULL.
  return { name, kind: 'entryValue', nullable: true, ops: TEXT_OPS, source };
}

const SPECS: readonly AttributeSpec[] = [
  uuid('id', false),
  text('name'),
  text('run_type'),
  text('status'),
  timestamp('start_time', false),
  timestamp('end_time', true),
  { name: 'latency', kind: 'latency', nullable: true, ops: [...ORDERED, 'exists'] },
  numeric('total_tokens'),
  numeric('prompt_tokens'),
  numeric('completion_tokens'),
  numeric('total_cost'),
  numeric('prompt_cost'),
  numeric('completion_cost'),
  timestamp('first_token_time', true),
  { name: 'error', kind: 'error', column: 'error', nullable: true, ops: ['eq', 'neq', 'like', 'search', 'exists'] },
  { name: 'tags', kind: 'tags', column: 'tags', nullable: false, ops: ['has', 'in'] },
  { name: 'metadata', kind: 'metadata', nullable: false, ops: ['has', 'exists'] },
  entryKey('metadata_key', 'metadata'),
  entryValue('metadata_value', 'metadata'),
  entryKey('feedback_key', 'feedback'),
  { name: 'feedback_score', kind: 'feedbackScore', nullable: false, ops: [...ORDERED, 'in'], source: 'feedback' },
  entryKey('input_key', 'inputs'),
  entryValue('input_value', 'inputs'),
  entryKey('output_key', 'outputs'),
  entryValue('output_value', 'outputs'),
  { name: 'is_root', kind: 'boolean', column: 'is_root', nullable: false, ops: ['eq', 'neq'] },
  uuid('trace_id', false),
  uuid('parent_run_id', true),
  uuid('reference_example_id', true),
  uuid('session_id', false),
  text('dotted_order'),
];

const BY_NAME = new Map(SPECS.map((spec) => [spec.name, spec]));

/** Every attribute a filter may name, in documentation order. */
export const attributeNames: readonly string[] = Object.freeze(SPECS.map((spec) => spec.name));

export function getAttribute(name: string): AttributeSpec | undefined {
  return BY_NAME.get(name);
}

/** Names the public docs mention that Berth deliberately does not store, with the reason to show users. */
export const unsupportedAttributes: ReadonlyMap<string, string> = new Map([
  ['execution_order', 'execution_order is deprecated and not stored; order runs by start_time or dotted_order'],
]);
