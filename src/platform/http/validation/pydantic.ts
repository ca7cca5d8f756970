// Validates request parts against the route's JSON schemas (TypeBox) and reports every problem the way
// FastAPI + pydantic v2 do, because Berth's public APIs are FastAPI-shaped and clients parse those bodies.
// Pydantic's lax mode is followed: numeric strings become numbers, "yes"/"off"/... become booleans.
import { uuidErrorText } from './uuid-error.ts';

export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

export interface Outcome {
  value: unknown;
  issues: ValidationIssue[];
}

type Schema = Record<string, any>;

const TRUE_WORDS = new Set(['1', 't', 'y', 'yes', 'on', 'true']);
const FALSE_WORDS = new Set(['0', 'f', 'n', 'no', 'off', 'false']);

function issue(loc: (string | number)[], type: string, msg: string, input: unknown, ctx?: Record<string, unknown>): ValidationIssue {
  return ctx === undefined ? { type, loc, msg, input } : { type, loc, msg, input, ctx };
}

function reprLiteral(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : String(value);
}

/** "'a', 'b' or 'c'", as pydantic renders the expected values of a Literal. */
export function expectedLiterals(values: readonly unknown[]): string {
  const parts = values.map(reprLiteral);
  return parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} or ${parts.at(-1)}`;
}

export function literalIssue(loc: (string | number)[], values: readonly unknown[], input: unknown): ValidationIssue {
  const expected = expectedLiterals(values);
  return issue(loc, 'literal_error', `Input should be ${expected}`, input, { expected });
}

function isNullable(schema: Schema): Schema | undefined {
  const branches: Schema[] | undefined = schema.anyOf;
  if (!branches || branches.length !== 2) return undefined;
  const nonNull = branches.find((branch) => branch.type !== 'null');
  return branches.some((branch) => branch.type === 'null') ? nonNull : undefined;
}

function checkNumberBounds(schema: Schema, value: number, loc: (string | number)[], input: unknown, issues: ValidationIssue[]): void {
  if (schema.minimum !== undefined && value < schema.minimum) {
    issues.push(issue(loc, 'greater_than_equal', `Input should be greater than or equal to ${schema.minimum}`, input, { ge: schema.minimum }));
  } else if (schema.maximum !== undefined && value > schema.maximum) {
    issues.push(issue(loc, 'less_than_equal', `Input should be less than or equal to ${schema.maximum}`, input, { le: schema.maximum }));
  } else if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) {
    issues.push(issue(loc, 'greater_than', `Input should be greater than ${schema.exclusiveMinimum}`, input, { gt: schema.exclusiveMinimum }));
  } else if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) {
    issues.push(issue(loc, 'less_than', `Input should be less than ${schema.exclusiveMaximum}`, input, { lt: schema.exclusiveMaximum }));
  }
}

function validateInteger(schema: Schema, input: unknown, loc: (string | number)[], issues: ValidationIssue[]): unknown {
  let value: number;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return issues.push(issue(loc, 'finite_number', 'Input should be a finite number', input)), input;
    if (!Number.isInteger(input)) {
      issues.push(issue(loc, 'int_from_float', 'Input should be a valid integer, got a number with a fractional part', input));
      return input;
    }
    value = input;
  } else if (typeof input === 'string') {
    const text = input.trim().replaceAll('_', '');
    if (!/^[+-]?\d+(\.0*)?$/.test(text)) {
      issues.push(issue(loc, 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer', input));
      return input;
    }
    value = Number.parseInt(text, 10);
  } else {
    issues.push(issue(loc, 'int_type', 'Input should be a valid integer', input));
    return input;
  }
  checkNumberBounds(schema, value, loc, input, issues);
  return value;
}

function validateNumber(schema: Schema, input: unknown, loc: (string | number)[], issues: ValidationIssue[]): unknown {
  let value: number;
  if (typeof input === 'number') value = input;
  else if (typeof input === 'string' && input.trim() !== '' && !Number.isNaN(Number(input))) value = Number(input);
  else if (typeof input === 'string') {
    issues.push(issue(loc, 'float_parsing', 'Input should be a valid number, unable to parse string as a number', input));
    return input;
  } else {
    issues.push(issue(loc, 'float_type', 'Input should be a valid number', input));
    return input;
  }
  checkNumberBounds(schema, value, loc, input, issues);
  return value;
}

function validateBoolean(input: unknown, loc: (string | number)[], issues: ValidationIssue[]): unknown {
  if (typeof input === 'boolean') return input;
  if (typeof input === 'string') {
    const word = input.toLowerCase();
    if (TRUE_WORDS.has(word)) return true;
    if (FALSE_WORDS.has(word)) return false;
    issues.push(issue(loc, 'bool_parsing', 'Input should be a valid boolean, unable to interpret input', input));
    return input;
  }
  if (input === 0 || input === 1) return input === 1;
  issues.push(issue(loc, 'bool_type', 'Input should be a valid boolean', input));
  return input;
}

const DATE_TIME = /^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d(:?\d\d)?)?$/i;

function validateString(schema: Schema, input: unknown, loc: (string | number)[], issues: ValidationIssue[]): unknown {
  if (typeof input !== 'string') {
    issues.push(issue(loc, 'string_type', 'Input should be a valid string', input));
    return input;
  }
  if (schema.format === 'uuid') {
    const error = uuidErrorText(input);
    if (error !== null) {
      issues.push(issue(loc, 'uuid_parsing', `Input should be a valid UUID, ${error}`, input, { error }));
      return input;
    }
    return input.toLowerCase();
  }
  if (schema.format === 'date-time' && (!DATE_TIME.test(input) || Number.isNaN(Date.parse(input)))) {
    issues.push(issue(loc, 'datetime_from_date_parsing', 'Input should be a valid datetime or date, invalid character in year', input, { error: 'invalid character in year' }));
    return input;
  }
  const length = [...input].length;
  if (schema.minLength !== undefined && length < schema.minLength) {
    const s = schema.minLength === 1 ? '' : 's';
    issues.push(issue(loc, 'string_too_short', `String should have at least ${schema.minLength} character${s}`, input, { min_length: schema.minLength }));
  } else if (schema.maxLength !== undefined && length > schema.maxLength) {
    const s = schema.maxLength === 1 ? '' : 's';
    issues.push(issue(loc, 'string_too_long', `String should have at most ${schema.maxLength} character${s}`, input, { max_length: schema.maxLength }));
  } else if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(input)) {
    issues.push(issue(loc, 'string_pattern_mismatch', `String should match pattern '${schema.pattern}'`, input, { pattern: schema.pattern }));
  }
  return input;
}

function validateArray(schema: Schema, input: unknown, loc: (string | number)[], issues: ValidationIssue[]): unknown {
  if (!Array.isArray(input)) {
    issues.push(issue(loc, 'list_type', 'Input should be a valid list', input));
    return input;
  }
  if (schema.maxItems !== undefined && input.length > schema.maxItems) {
    // pydantic-core stops at the first item past the limit: the errors of earlier items are dropped.
    issues.push(issue(loc, 'too_long', `List should have at most ${schema.maxItems} item${schema.maxItems === 1 ? '' : 's'} after validation, not ${input.length}`, input, { field_type: 'List', max_length: schema.maxItems, actual_length: input.length }));
    return input;
  }
  const items = schema.items ? input.map((item, index) => validateValue(schema.items, item, [...loc, index], issues)) : input;
  if (schema.minItems !== undefined && input.length < schema.minItems) {
    issues.push(issue(loc, 'too_short', `List should have at least ${schema.minItems} item${schema.minItems === 1 ? '' : 's'} after validation, not ${input.length}`, input, { field_type: 'List', min_length: schema.minItems, actual_length: input.length }));
  }
  return items;
}

function validateObject(schema: Schema, input: unknown, loc: (string | number)[], issues: ValidationIssue[]): unknown {
  const isModel = schema.properties !== undefined;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    issues.push(isModel
      ? issue(loc, 'model_attributes_type', 'Input should be a valid dictionary or object to extract fields from', input)
      : issue(loc, 'dict_type', 'Input should be a valid dictionary', input));
    return input;
  }
  const source = input as Record<string, unknown>;
  const output: Record<string, unknown> = { ...source };
  const required = new Set<string>(schema.required ?? []);
  for (const [key, propertySchema] of Object.entries<Schema>(schema.properties ?? {})) {
    const present = Object.hasOwn(source, key) && source[key] !== undefined;
    if (!present) {
      // As in pydantic, a field with a default is never required.
      if (propertySchema.default !== undefined) output[key] = structuredClone(propertySchema.default);
      else if (required.has(key)) issues.push(issue([...loc, key], 'missing', 'Field required', input));
      continue;
    }
    output[key] = validateValue(propertySchema, source[key], [...loc, key], issues);
  }
  if (typeof schema.additionalProperties === 'object') {
    for (const key of Object.keys(source)) {
      if (schema.properties && Object.hasOwn(schema.properties, key)) continue;
      output[key] = validateValue(schema.additionalProperties, source[key], [...loc, key], issues);
    }
  }
  return output;
}

/** Validates one value; pushes issues and returns the coerced value. */
export function validateValue(schema: Schema, input: unknown, loc: (string | number)[], issues: ValidationIssue[]): unknown {
  const inner = isNullable(schema);
  if (inner) return input === null ? null : validateValue(inner, input, loc, issues);
  if (schema.anyOf) {
    // A union of literals, the only other union Berth's schemas use.
    const values = (schema.anyOf as Schema[]).map((branch) => branch.const);
    if (values.includes(input)) return input;
    issues.push(literalIssue(loc, values, input));
    return input;
  }
  if (schema.const !== undefined) {
    if (input !== schema.const) issues.push(literalIssue(loc, [schema.const], input));
    return input;
  }
  if (schema.enum) {
    if (!schema.enum.includes(input)) issues.push(literalIssue(loc, schema.enum, input));
    return input;
  }
  switch (schema.type) {
    case 'integer': return validateInteger(schema, input, loc, issues);
    case 'number': return validateNumber(schema, input, loc, issues);
    case 'boolean': return validateBoolean(input, loc, issues);
    case 'string': return validateString(schema, input, loc, issues);
    case 'array': return validateArray(schema, input, loc, issues);
    case 'object': return validateObject(schema, input, loc, issues);
    case 'null':
      if (input !== null) issues.push(issue(loc, 'none_required', 'Input should be None', input));
      return input;
    default: return input;
  }
}

/**
 * Validates a flat part (path, query, header) whose values are strings. FastAPI reports a missing
 * required parameter with input null. A list parameter takes every occurrence of a repeated key
 * (`?id=a&id=b`, FastAPI's `getlist`); any other parameter takes the last one.
 */
export function validateParameters(schema: Schema, input: Record<string, unknown>, part: 'path' | 'query' | 'header'): Outcome {
  const issues: ValidationIssue[] = [];
  const value: Record<string, unknown> = { ...input };
  const required = new Set<string>(schema.required ?? []);
  for (const [name, propertySchema] of Object.entries<Schema>(schema.properties ?? {})) {
    const key = part === 'header' ? name.toLowerCase() : name;
    const raw = input[key];
    if (raw === undefined) {
      if (propertySchema.default !== undefined) value[key] = propertySchema.default;
      else if (required.has(name)) issues.push(issue([part, name], 'missing', 'Field required', null));
      continue;
    }
    const list = (isNullable(propertySchema) ?? propertySchema).type === 'array';
    const given = list ? [raw].flat() : Array.isArray(raw) ? raw.at(-1) : raw;
    value[key] = validateValue(propertySchema, given, [part, name], issues);
  }
  return { value, issues };
}

/** Validates a JSON body. An absent body is FastAPI's `missing` at loc ["body"]. */
export function validateBody(schema: Schema, input: unknown, required: boolean): Outcome {
  const issues: ValidationIssue[] = [];
  if (input === undefined || input === null) {
    if (required) issues.push(issue(['body'], 'missing', 'Field required', null));
    return { value: input, issues };
  }
  const value = validateValue(schema, input, ['body'], issues);
  return { value, issues };
}
