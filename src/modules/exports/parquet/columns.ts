// Parquet column types per format version (decisions.md) and the conversion of scanned rows into column arrays.
//   v1:      ids/strings UTF8, JSON as text, lists as JSON text, timestamps TIMESTAMP(MICROS, adjusted to UTC = false)
//   v2_beta: timestamps TIMESTAMP(MICROS, adjusted to UTC = true), lists LIST<STRING>, JSON with the JSON logical type
// Booleans, integers (INT64) and costs (DOUBLE) are native in both.
import type { SchemaElement } from 'hyparquet';
import type { ColumnSource } from 'hyparquet-writer';
import { FIELD_KINDS, type ExportField } from '../fields.ts';
import type { FormatVersion } from '../schemas.ts';
import { isoToMicros } from '../timestamps.ts';

export interface ColumnPlan {
  schema: SchemaElement[];
  /** Every column's settings, without data, in schema order. */
  columns: Omit<ColumnSource, 'data'>[];
  /** Turns a batch of rows into one value array per column, in schema order (plain data: cloneable to a thread). */
  toData(rows: readonly Record<string, unknown>[]): unknown[][];
  /** `columns` with `toData`'s arrays attached. */
  withData(data: unknown[][]): ColumnSource[];
  toColumns(rows: readonly Record<string, unknown>[]): ColumnSource[];
}

// Nearly unique per row: a dictionary would never pay for itself, and statistics of long text are large.
const PLAIN_FIELDS: ReadonlySet<string> = new Set(['id', 'trace_id', 'parent_run_id', 'reference_example_id', 'dotted_order', 'parent_run_ids', 'error']);

function jsonText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return JSON.stringify(value);
}

// jsonb arrives parsed: a JSON string value is a JavaScript string and must stay one.
function jsonValue(value: unknown): unknown {
  return value === undefined ? null : value;
}

function stringList(value: unknown): string[] | null {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((item) => (typeof item === 'string' ? item : JSON.stringify(item)));
  if (typeof value === 'string') {
    // A Postgres array literal or JSON text from an older source: keep it readable rather than fail the export.
    try {
      const parsed = JSON.parse(value);
      if (Array.isArray(parsed)) return stringList(parsed);
    } catch {
      // not JSON
    }
    return [value];
  }
  return [JSON.stringify(value)];
}

function int64(value: unknown): bigint | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'bigint') return value;
  const number = Number(value);
  return Number.isFinite(number) ? BigInt(Math.trunc(number)) : null;
}

function double(value: unknown): number | null {
  if (value === null || value === undefined || value === '') return null;
  const number = Number(value);
  return Number.isFinite(number) ? number : null;
}

function timestamp(value: unknown): bigint | null {
  if (value === null || value === undefined || value === '') return null;
  if (value instanceof Date) return BigInt(value.getTime()) * 1000n;
  if (typeof value === 'number') return BigInt(Math.trunc(value * 1000));
  return BigInt(isoToMicros(String(value)));
}

function text(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : String(value);
}

function boolean(value: unknown): boolean | null {
  if (value === null || value === undefined) return null;
  return Boolean(value);
}

interface ColumnSpec {
  elements: SchemaElement[];
  convert: (value: unknown) => unknown;
  statistics: boolean;
  plain: boolean;
}

function columnSpec(name: ExportField, version: FormatVersion): ColumnSpec {
  const kind = FIELD_KINDS[name];
  const utf8 = (convert: (value: unknown) => unknown = text): ColumnSpec => ({
    elements: [{ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' }],
    convert, statistics: !PLAIN_FIELDS.has(name), plain: PLAIN_FIELDS.has(name),
  });
  switch (kind) {
    case 'uuid':
    case 'string':
      return utf8();
    case 'boolean':
      return { elements: [{ name, type: 'BOOLEAN', repetition_type: 'OPTIONAL' }], convert: boolean, statistics: true, plain: false };
    case 'int':
      return { elements: [{ name, type: 'INT64', repetition_type: 'OPTIONAL' }], convert: int64, statistics: true, plain: false };
    case 'decimal':
      return { elements: [{ name, type: 'DOUBLE', repetition_type: 'OPTIONAL' }], convert: double, statistics: true, plain: false };
    case 'timestamp': {
      const adjusted = version === 'v2_beta';
      const element: SchemaElement = {
        name, type: 'INT64', repetition_type: 'OPTIONAL',
        logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: adjusted, unit: 'MICROS' },
      };
      // The legacy converted type means "adjusted to UTC", so only the UTC flavour may carry it.
      if (adjusted) element.converted_type = 'TIMESTAMP_MICROS';
      return { elements: [element], convert: timestamp, statistics: true, plain: false };
    }
    case 'json':
      if (version === 'v1') return { ...utf8(jsonText), statistics: false, plain: true };
      // The writer serializes these itself (readers such as DuckDB go by the converted type JSON).
      return {
        elements: [{ name, type: 'BYTE_ARRAY', converted_type: 'JSON', logical_type: { type: 'JSON' }, repetition_type: 'OPTIONAL' }],
        convert: jsonValue, statistics: false, plain: true,
      };
    case 'list':
      if (version === 'v1') return { ...utf8((value) => jsonText(stringList(value))), statistics: false };
      return {
        elements: [
          { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', logical_type: { type: 'LIST' }, num_children: 1 },
          { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
          { name: 'element', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
        ],
        convert: stringList, statistics: false, plain: PLAIN_FIELDS.has(name),
      };
  }
}

export function columnPlan(fields: readonly ExportField[], version: FormatVersion): ColumnPlan {
  const specs = fields.map((name) => ({ name, spec: columnSpec(name, version) }));
  const schema: SchemaElement[] = [{ name: 'root', num_children: specs.length }, ...specs.flatMap(({ spec }) => spec.elements)];
  const columns = specs.map(({ name, spec }) => {
    const column: Omit<ColumnSource, 'data'> = { name, statistics: spec.statistics };
    if (spec.plain) column.encoding = 'PLAIN';
    return column;
  });
  const toData = (rows: readonly Record<string, unknown>[]) => specs.map(({ name, spec }) => {
    const data = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) data[i] = spec.convert(rows[i]![name]);
    return data;
  });
  const withData = (data: unknown[][]) => columns.map((column, index) => ({ ...column, data: data[index]! }) as ColumnSource);
  return { schema, columns, toData, withData, toColumns: (rows) => withData(toData(rows)) };
}
