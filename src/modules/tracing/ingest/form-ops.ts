// Turns the parts of a /runs/multipart body into run operations: `post.{id}` / `patch.{id}` carry the run
// JSON, `post.{id}.inputs` (…outputs, events, extra, error, serialized) carry one field each, and
// `attachment.{id}.{name}` carries raw bytes for the run.
import type { ValidationIssue } from '../../../platform/http/validation/pydantic.ts';
import { uuidError as uuidErrorText, toCanonicalUuid as canonicalUuid } from './ids.ts';
import type { FormPart } from './multipart.ts';
import { buildRunOp, type OpKind, type RunOp } from './run-op.ts';

const SIDE_FIELDS = new Set(['inputs', 'outputs', 'events', 'extra', 'error', 'serialized']);
const MAX_ATTACHMENT_NAME = 255;

interface Pending {
  kind: OpKind;
  id: string;
  body?: Record<string, unknown>;
  fields: Record<string, unknown>;
  issues: ValidationIssue[];
}

export interface FormOps {
  ops: RunOp[];
  issues: ValidationIssue[];
}

function decodeJson(part: FormPart, issues: ValidationIssue[]): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(part.data.toString('utf8')) };
  } catch (error) {
    issues.push({ type: 'json_invalid', loc: ['body', part.name], msg: 'JSON decode error', input: null, ctx: { error: (error as Error).message } });
    return { ok: false };
  }
}

export function formToOps(parts: readonly FormPart[]): FormOps {
  const issues: ValidationIssue[] = [];
  const pending = new Map<string, Pending>();
  const attachments = new Map<string, { name: string; mimeType: string; content: Buffer }[]>();

  for (const part of parts) {
    const [head, rawId, field, ...rest] = part.name.split('.');
    const idError = rawId === undefined ? 'missing run id' : uuidErrorText(rawId);
    if ((head !== 'post' && head !== 'patch' && head !== 'attachment') || idError !== null) {
      issues.push({ type: 'value_error', loc: ['body', part.name], msg: 'Part name must be post.<run id>[.<field>], patch.<run id>[.<field>] or attachment.<run id>.<name>', input: part.name });
      continue;
    }
    const id = canonicalUuid(rawId!);
    if (head === 'attachment') {
      const name = [field, ...rest].join('.');
      if (field === undefined || rest.length > 0 || name === '' || name.length > MAX_ATTACHMENT_NAME) {
        issues.push({ type: 'value_error', loc: ['body', part.name], msg: 'Attachment names must be non-empty, without ".", at most 255 characters', input: part.name });
        continue;
      }
      const mimeType = (part.contentType ?? 'application/octet-stream').split(';')[0]!.trim() || 'application/octet-stream';
      const list = attachments.get(id) ?? [];
      list.push({ name, mimeType, content: part.data });
      attachments.set(id, list);
      continue;
    }
    if (rest.length > 0 || (field !== undefined && !SIDE_FIELDS.has(field))) {
      issues.push({ type: 'value_error', loc: ['body', part.name], msg: `Unknown run part: expected ${head}.<run id> or ${head}.<run id>.<${[...SIDE_FIELDS].join('|')}>`, input: part.name });
      continue;
    }
    const key = `${head}.${id}`;
    let entry = pending.get(key);
    if (!entry) {
      entry = { kind: head, id, fields: {}, issues: [] };
      pending.set(key, entry);
    }
    const decoded = decodeJson(part, entry.issues);
    if (!decoded.ok) continue;
    if (field === undefined) {
      if (typeof decoded.value !== 'object' || decoded.value === null || Array.isArray(decoded.value)) {
        entry.issues.push({ type: 'dict_type', loc: ['body', part.name], msg: 'Input should be a valid dictionary or object', input: null });
      } else {
        entry.body = decoded.value as Record<string, unknown>;
      }
    } else {
      entry.fields[field] = decoded.value;
    }
  }

  const ops: RunOp[] = [];
  for (const [key, entry] of pending) {
    if (entry.issues.length > 0) {
      issues.push(...entry.issues);
      continue;
    }
    if (!entry.body) {
      issues.push({ type: 'missing', loc: ['body', key], msg: `Field parts were sent for run ${entry.id} without its ${key} part`, input: null });
      continue;
    }
    if (entry.body.id !== undefined && (typeof entry.body.id !== 'string' || uuidErrorText(entry.body.id) !== null || canonicalUuid(entry.body.id) !== entry.id)) {
      issues.push({ type: 'value_error', loc: ['body', key, 'id'], msg: 'id in the run JSON must match the id in the part name', input: entry.body.id });
      continue;
    }
    const result = buildRunOp(entry.kind, { ...entry.body, ...entry.fields }, ['body', key], entry.id);
    if (!result.op) {
      issues.push(...result.issues);
      continue;
    }
    if (entry.kind === 'post' || !pending.has(`post.${entry.id}`)) {
      const files = attachments.get(entry.id);
      if (files) {
        result.op.attachments = files;
        attachments.delete(entry.id);
      }
    }
    ops.push(result.op);
  }
  for (const [id] of attachments) {
    issues.push({ type: 'value_error', loc: ['body', `attachment.${id}`], msg: `Attachments were sent for run ${id} without a post.${id} or patch.${id} part`, input: null });
  }
  return { ops, issues };
}
