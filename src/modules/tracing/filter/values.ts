import type { Comparator, Literal, Operand, Scalar } from './ast.ts';
import type { AttributeSpec } from './attributes.ts';
import { FilterError, quoteForMessage } from './errors.ts';

/** Long enough for any real list of ids or names, short enough to keep one query's parameters sane. */
export const MAX_LIST_ITEMS = 1000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/;
const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/;
const UNIT_SECONDS: ReadonlyMap<string, number> = new Map([
  ['s', 1],
  ['m', 60],
  ['h', 3600],
  ['d', 86400],
]);
const MAX_JSON_DEPTH = 64;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const EXPECT = {
  uuid: 'a UUID string such as "0e01bf50-474d-4536-810f-67d3ee7ea3e7"',
  text: 'a string',
  timestamp: 'an ISO 8601 timestamp string such as "2024-07-15T12:34:56Z"',
  latency: 'a number of seconds or a duration string such as "5s", "2.5m" or "1h"',
  number: 'a number',
  boolean: 'true or false',
  entryValue: 'a string, number or boolean',
  list: 'a list of values such as ["a", "b"]',
  json: `a JSON object in a string, such as '{"foo": "bar"}'`,
} as const;

/**
 * Checks a literal against what `op` means on the attribute and turns it into the value to bind.
 * Errors point at the literal (or the list item) at fault.
 */
export function checkOperand(spec: AttributeSpec, op: Comparator, literal: Literal): Operand {
  if (op === 'in') {
    if (literal.kind !== 'array') fail(spec, op, literal, EXPECT.list);
    if (literal.items.length === 0) {
      throw new FilterError(literal.start, `in(${spec.name}, …) needs at least one value`, expectedScalar(spec));
    }
    if (literal.items.length > MAX_LIST_ITEMS) {
      const extra = literal.items[MAX_LIST_ITEMS] ?? literal;
      throw new FilterError(extra.start, `the list has more than ${MAX_LIST_ITEMS} values`, `at most ${MAX_LIST_ITEMS} values`);
    }
    return { type: 'list', items: literal.items.map((item) => scalar(spec, op, item)) };
  }
  if (literal.kind === 'array') {
    fail(spec, op, literal, op === 'eq' ? `${expectedScalar(spec)} (use in(${spec.name}, [...]) for a list)` : expectedScalar(spec));
  }
  switch (op) {
    case 'exists':
      if (spec.kind === 'metadata') return { type: 'text', value: nonEmptyString(spec, op, literal, 'a metadata key string') };
      if (literal.kind !== 'boolean') fail(spec, op, literal, EXPECT.boolean);
      return { type: 'boolean', value: literal.value };
    case 'like':
    case 'search':
      if (literal.kind !== 'string') fail(spec, op, literal, EXPECT.text);
      if (op === 'like' && /(^|[^\\])(\\\\)*\\$/.test(literal.value)) {
        // PostgreSQL may reject a pattern ending in its escape character; say so before it does.
        throw new FilterError(literal.start, 'the like pattern ends with a lone backslash, which escapes nothing', 'a pattern where \\ precedes %, _ or another \\');
      }
      return { type: 'text', value: literal.value };
    case 'has':
      if (spec.kind === 'metadata') return jsonObject(spec, op, literal);
      if (literal.kind !== 'string') fail(spec, op, literal, 'a tag string');
      return { type: 'text', value: literal.value };
    case 'eq':
    case 'neq':
      if (literal.kind === 'null' && spec.nullable) return { type: 'null' };
      if (literal.kind === 'boolean' && spec.kind === 'error') return { type: 'boolean', value: literal.value };
      return scalar(spec, op, literal);
    default:
      return scalar(spec, op, literal);
  }
}

function scalar(spec: AttributeSpec, op: Comparator, literal: Literal): Scalar {
  switch (spec.kind) {
    case 'uuid': {
      if (literal.kind !== 'string') fail(spec, op, literal, EXPECT.uuid);
      if (!UUID.test(literal.value)) {
        throw new FilterError(literal.start, `${quoteForMessage(literal.value)} is not a valid UUID for ${spec.name}`, EXPECT.uuid);
      }
      return { type: 'uuid', value: literal.value.toLowerCase() };
    }
    case 'timestamp': {
      if (literal.kind !== 'string') fail(spec, op, literal, EXPECT.timestamp);
      return { type: 'timestamp', value: normalizeTimestamp(literal.value, literal.start) };
    }
    case 'latency':
      if (literal.kind === 'number') return { type: 'number', value: literal.text };
      if (literal.kind !== 'string') fail(spec, op, literal, EXPECT.latency);
      return { type: 'number', value: durationSeconds(literal.value, literal.start) };
    case 'number':
    case 'feedbackScore':
      if (literal.kind !== 'number') fail(spec, op, literal, EXPECT.number);
      return { type: 'number', value: literal.text };
    case 'boolean':
      if (literal.kind !== 'boolean') fail(spec, op, literal, EXPECT.boolean);
      return { type: 'boolean', value: literal.value };
    case 'entryValue':
      // Values are compared as the text jsonb_each_text yields: numbers and booleans in their JSON spelling.
      if (literal.kind === 'string') return { type: 'text', value: literal.value };
      if (literal.kind === 'number') return { type: 'text', value: literal.text };
      if (literal.kind === 'boolean') return { type: 'text', value: String(literal.value) };
      return fail(spec, op, literal, EXPECT.entryValue);
    default:
      if (literal.kind !== 'string') fail(spec, op, literal, spec.kind === 'error' ? 'a string, true, false or null' : EXPECT.text);
      return { type: 'text', value: literal.value };
  }
}

function expectedScalar(spec: AttributeSpec): string {
  switch (spec.kind) {
    case 'uuid':
    case 'timestamp':
    case 'latency':
    case 'number':
    case 'boolean':
    case 'entryValue':
      return EXPECT[spec.kind];
    case 'feedbackScore':
      return EXPECT.number;
    default:
      return EXPECT.text;
  }
}

function fail(spec: AttributeSpec, op: Comparator, literal: Literal, expected: string): never {
  const extra = literal.kind === 'null' && !spec.nullable && (op === 'eq' || op === 'neq') ? ` (${spec.name} is never null)` : '';
  throw new FilterError(literal.start, `${op}(${spec.name}, …) cannot take ${describeLiteral(literal)}${extra}`, expected);
}

function nonEmptyString(spec: AttributeSpec, op: Comparator, literal: Literal, expected: string): string {
  if (literal.kind !== 'string') fail(spec, op, literal, expected);
  if (literal.value === '') throw new FilterError(literal.start, `${op}(${spec.name}, …) needs a non-empty key`, expected);
  return literal.value;
}

function jsonObject(spec: AttributeSpec, op: Comparator, literal: Literal): Scalar {
  if (literal.kind !== 'string') fail(spec, op, literal, EXPECT.json);
  let parsed: unknown;
  try {
    parsed = JSON.parse(literal.value);
  } catch {
    throw new FilterError(literal.start, `${quoteForMessage(literal.value)} is not valid JSON`, EXPECT.json);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new FilterError(literal.start, `has(${spec.name}, …) needs a JSON object, not ${quoteForMessage(literal.value)}`, EXPECT.json);
  }
  const problem = jsonProblem(parsed);
  if (problem !== undefined) throw new FilterError(literal.start, `the JSON ${problem}`, EXPECT.json);
  return { type: 'json', value: JSON.stringify(parsed) };
}

/**
 * jsonb rejects what JSON.parse accepts in a few corners (NUL, unpaired surrogates, numbers beyond double
 * range that JSON.parse turns into Infinity, nesting deep enough to hit PostgreSQL's stack limit).
 */
function jsonProblem(root: unknown): string | undefined {
  const stack: Array<[unknown, number]> = [[root, 1]];
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [value, depth] = entry;
    if (depth > MAX_JSON_DEPTH) return `is nested more than ${MAX_JSON_DEPTH} levels deep`;
    if (typeof value === 'string' && (value.includes('\0') || LONE_SURROGATE.test(value))) {
      return 'contains a NUL character or invalid Unicode';
    }
    if (typeof value === 'number' && !Number.isFinite(value)) return 'contains a number out of range';
    if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        if (key.includes('\0') || LONE_SURROGATE.test(key)) return 'contains a NUL character or invalid Unicode';
        stack.push([child, depth + 1]);
      }
    }
  }
  return undefined;
}

/** Renders a timestamp for `::timestamptz` with an explicit offset, so the session time zone never matters. */
export function normalizeTimestamp(value: string, position: number): string {
  const m = TIMESTAMP.exec(value);
  const invalid = (why: string): never => {
    throw new FilterError(position, `${quoteForMessage(value)} is not a valid timestamp: ${why}`, EXPECT.timestamp);
  };
  if (!m) return invalid('use YYYY-MM-DD, optionally followed by Thh:mm[:ss[.ffffff]] and Z or ±hh:mm');
  const [, y = '', mo = '', d = '', h = '00', mi = '00', s = '00', frac, zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (year < 1) invalid('the year must be 0001 or later');
  if (month < 1 || month > 12) invalid(`there is no month ${mo}`);
  if (day < 1 || day > daysInMonth(year, month)) invalid(`day ${d} does not exist in ${y}-${mo}`);
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) invalid('the time of day is out of range');
  let offset = '+00:00';
  if (zone !== undefined && zone !== 'Z') {
    const oh = zone.slice(1, 3);
    const om = zone.slice(3).replace(':', '') || '00';
    // PostgreSQL accepts displacements up to 15:59.
    if (Number(oh) > 15 || Number(om) > 59) invalid(`the UTC offset ${zone} is out of range`);
    offset = `${zone[0]}${oh}:${om}`;
  }
  return `${y}-${mo}-${d}T${h}:${mi}:${s}${frac === undefined ? '' : `.${frac}`}${offset}`;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** "5s", "2.5m", "1h", "250ms", or a bare number, as exact decimal seconds. */
export function durationSeconds(value: string, position: number): string {
  const m = DURATION.exec(value.trim());
  if (!m || m[1] === undefined) throw new FilterError(position, `${quoteForMessage(value)} is not a duration`, EXPECT.latency);
  const [whole = '', fraction = ''] = m[1].split('.');
  // Decimal arithmetic on the digits, so "1.1m" is 66 seconds and not 66.00000000000001.
  let digits = BigInt(whole + fraction);
  let scale = fraction.length;
  const unit = m[2] ?? 's';
  if (unit === 'ms') scale += 3;
  else digits *= BigInt(UNIT_SECONDS.get(unit) ?? 1);
  const text = digits.toString().padStart(scale + 1, '0');
  const integer = text.slice(0, text.length - scale);
  const decimals = text.slice(text.length - scale).replace(/0+$/, '');
  return decimals === '' ? integer : `${integer}.${decimals}`;
}

function describeLiteral(literal: Literal): string {
  switch (literal.kind) {
    case 'string':
      return `the string ${quoteForMessage(literal.value)}`;
    case 'number':
      return `the number ${literal.text}`;
    case 'boolean':
      return String(literal.value);
    case 'null':
      return 'null';
    case 'array':
      return 'a list';
  }
}
