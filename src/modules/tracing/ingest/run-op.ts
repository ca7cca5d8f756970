// One create (post) or update (patch) of a run as the SDK sends it, validated and with its derived fields
// (trace_id, parent_run_id, parent_run_ids and start_time from dotted_order; tokens and costs from usage).
import type { ValidationIssue } from '../../../platform/http/validation/pydantic.ts';
import { uuidError as uuidErrorText, toCanonicalUuid as canonicalUuid } from './ids.ts';
import { dottedTime, normalizeTime, toDottedStamp } from './times.ts';
import { extractUsage, firstTokenTime, type Usage } from './usage.ts';

export type OpKind = 'post' | 'patch';

/** Column values of one run as stored; undefined = not given by this operation. */
/** Token counts and costs come as in `Usage`. */
export interface RunValues extends Usage {
  id: string;
  name?: string;
  run_type?: string;
  start_time?: string;
  end_time?: string;
  inputs?: unknown;
  outputs?: unknown;
  error?: string;
  extra?: Record<string, unknown>;
  events?: unknown;
  tags?: string[];
  serialized?: unknown;
  trace_id?: string;
  parent_run_id?: string | null;
  parent_run_ids?: string[];
  dotted_order?: string;
  reference_example_id?: string;
  trace_tier?: string;
  first_token_time?: string;
}

export interface RunOp {
  kind: OpKind;
  values: RunValues;
  /** The project by name or id; neither = the default project. */
  sessionName?: string;
  sessionId?: string;
  /** Where this op came from in the request, for error locations ("post", 3) or ("post.<id>"). */
  loc: (string | number)[];
  attachments?: { name: string; mimeType: string; content: Buffer }[];
}

export const DEFAULT_PROJECT = 'default';
const SEGMENT = /^(\d{8}T\d{12})Z([0-9a-fA-F-]{36})$/;
const MAX_NAME = 1024;

class Problems {
  readonly issues: ValidationIssue[] = [];
  readonly #loc: (string | number)[];
  constructor(loc: (string | number)[]) {
    this.#loc = loc;
  }
  add(field: string, msg: string, input: unknown, type = 'value_error'): void {
    this.issues.push({ type, loc: [...this.#loc, field], msg, input: input === undefined ? null : input });
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function uuidField(p: Problems, body: Record<string, unknown>, field: string): string | null | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (value === null) return null;
  const error = typeof value === 'string' ? uuidErrorText(value) : 'not a string';
  if (error !== null) {
    p.add(field, `Input should be a valid UUID, ${error}`, value, 'uuid_parsing');
    return undefined;
  }
  return canonicalUuid(value as string);
}

function timeField(p: Problems, body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  const time = normalizeTime(value);
  if (time === undefined) p.add(field, `${field} must be an ISO 8601 timestamp or epoch milliseconds`, value);
  return time;
}

function textField(p: Problems, body: Record<string, unknown>, field: string, max = MAX_NAME): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    p.add(field, 'Input should be a valid string', value, 'string_type');
    return undefined;
  }
  if (value.length > max) p.add(field, `String should have at most ${max} characters`, value.slice(0, 100), 'string_too_long');
  if (value.includes('\u0000')) p.add(field, 'String must not contain the NUL character', value.replaceAll('\u0000', '\ufffd'));
  return value;
}

/** Parses a dotted_order into its segments: [{time, id}], root first. */
export function parseDottedOrder(dotted: string): { time: string; id: string }[] | undefined {
  const segments = [];
  for (const part of dotted.split('.')) {
    const match = SEGMENT.exec(part);
    if (!match || uuidErrorText(match[2]!) !== null) return undefined;
    const time = dottedTime(match[1]!);
    if (time === undefined) return undefined;
    segments.push({ time, id: canonicalUuid(match[2]!) });
  }
  return segments;
}

/**
 * Validates one run operation. `body` is the run JSON with its side parts (inputs, outputs, …) merged in.
 * Returns the op, or the issues that make it unacceptable.
 */
export function buildRunOp(kind: OpKind, body: unknown, loc: (string | number)[], pathId?: string): { op?: RunOp; issues: ValidationIssue[] } {
  const p = new Problems(loc);
  if (!isObject(body)) {
    p.add('body', 'Input should be a valid dictionary or object', body, 'dict_type');
    return { issues: p.issues };
  }
  const id = pathId ?? uuidField(p, body, 'id');
  if (id === undefined || id === null) {
    if (p.issues.length === 0) p.add('id', 'Field required', body.id, 'missing');
    return { issues: p.issues };
  }
  const values: RunValues = { id };
  values.name = textField(p, body, 'name');
  values.run_type = textField(p, body, 'run_type', 64);
  values.start_time = timeField(p, body, 'start_time');
  values.end_time = timeField(p, body, 'end_time');
  values.trace_tier = textField(p, body, 'trace_tier', 64);
  const traceId = uuidField(p, body, 'trace_id');
  const parentRunId = uuidField(p, body, 'parent_run_id');
  const referenceExampleId = uuidField(p, body, 'reference_example_id');
  if (referenceExampleId) values.reference_example_id = referenceExampleId;
  const sessionId = uuidField(p, body, 'session_id');
  const sessionName = textField(p, body, 'session_name');

  for (const field of ['inputs', 'outputs'] as const) {
    const value = body[field];
    if (value === undefined || value === null) continue;
    if (!isObject(value)) p.add(field, 'Input should be a valid dictionary', value, 'dict_type');
    else values[field] = value;
  }
  if (body.extra !== undefined && body.extra !== null) {
    if (!isObject(body.extra)) p.add('extra', 'Input should be a valid dictionary', body.extra, 'dict_type');
    else values.extra = body.extra;
  }
  if (body.serialized !== undefined && body.serialized !== null) values.serialized = body.serialized;
  if (body.events !== undefined && body.events !== null) {
    if (!Array.isArray(body.events)) p.add('events', 'Input should be a valid list', body.events, 'list_type');
    else values.events = body.events;
  }
  if (body.error !== undefined && body.error !== null) {
    // The SDK sends the error message as a string; anything else is kept as its JSON text.
    values.error = typeof body.error === 'string' ? body.error : JSON.stringify(body.error);
  }
  if (body.tags !== undefined && body.tags !== null) {
    if (!Array.isArray(body.tags) || body.tags.some((tag) => typeof tag !== 'string')) p.add('tags', 'Input should be a valid list of strings', body.tags, 'list_type');
    else values.tags = body.tags as string[];
  }

  deriveLineage(p, body, values, traceId, parentRunId);

  if (kind === 'post') {
    if (values.name === undefined) p.add('name', 'Field required', undefined, 'missing');
    if (values.run_type === undefined) p.add('run_type', 'Field required', undefined, 'missing');
    if (values.start_time === undefined) p.add('start_time', 'Field required', undefined, 'missing');
  }
  // Compared to the millisecond: the JS SDK puts an execution counter into the microseconds of start_time.
  if (values.start_time && values.end_time && values.end_time.slice(0, 23) < values.start_time.slice(0, 23)) {
    p.add('end_time', 'end_time must not be before start_time', body.end_time);
  }
  if (p.issues.length > 0) return { issues: p.issues };

  const usage = extractUsage(values);
  Object.assign(values, usage);
  const firstToken = firstTokenTime(values.events);
  if (firstToken) values.first_token_time = firstToken;

  const op: RunOp = { kind, values, loc };
  if (sessionId) op.sessionId = sessionId;
  else if (sessionName !== undefined) op.sessionName = sessionName;
  return { op, issues: [] };
}

/**
 * trace_id, parent_run_id and the ancestors come from dotted_order when it is given, and must agree with
 * the explicit fields. Without dotted_order a root run gets its single segment; a child keeps
 * parent_run_id and its lineage is completed from the stored parent (see IngestService).
 */
function deriveLineage(p: Problems, body: Record<string, unknown>, values: RunValues, traceId: string | null | undefined, parentRunId: string | null | undefined): void {
  const dotted = body.dotted_order;
  if (dotted !== undefined && dotted !== null) {
    const segments = typeof dotted === 'string' && dotted.length <= 100_000 ? parseDottedOrder(dotted) : undefined;
    if (!segments) {
      p.add('dotted_order', 'dotted_order must be segments <YYYYMMDDTHHMMSSffffff>Z<uuid> joined by "."', dotted);
      return;
    }
    const last = segments.at(-1)!;
    if (last.id !== values.id) p.add('dotted_order', `dotted_order must end with the run's own id ${values.id}`, dotted);
    if (traceId && traceId !== segments[0]!.id) p.add('trace_id', `trace_id must be the id of the first dotted_order segment (${segments[0]!.id})`, traceId);
    const parentFromOrder = segments.length > 1 ? segments.at(-2)!.id : null;
    if (parentRunId !== undefined && parentRunId !== parentFromOrder) {
      p.add('parent_run_id', parentFromOrder ? `parent_run_id must be the id of the penultimate dotted_order segment (${parentFromOrder})` : 'a run with a one-segment dotted_order is a root and has no parent_run_id', parentRunId);
    }
    values.dotted_order = dotted as string;
    values.trace_id = segments[0]!.id;
    values.parent_run_id = parentFromOrder;
    values.parent_run_ids = segments.slice(0, -1).map((segment) => segment.id);
    values.start_time ??= last.time;
    return;
  }
  if (parentRunId) {
    // Completed from the parent's stored lineage before writing.
    values.parent_run_id = parentRunId;
    if (traceId) values.trace_id = traceId;
    return;
  }
  if (parentRunId === null || traceId === undefined || traceId === values.id) {
    if (traceId && traceId !== values.id) p.add('trace_id', 'a root run (no parent_run_id) must have trace_id equal to its id', traceId);
    values.trace_id = values.id;
    values.parent_run_id = null;
    values.parent_run_ids = [];
    if (values.start_time) values.dotted_order = `${toDottedStamp(values.start_time)}Z${values.id}`;
    return;
  }
  p.add('trace_id', 'a run whose trace_id differs from its id needs parent_run_id or dotted_order', traceId);
}
