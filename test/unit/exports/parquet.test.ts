import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { columnPlan } from '../../../src/modules/exports/parquet/columns.ts';
import { PartWriter } from '../../../src/modules/exports/parquet/parquet-file.ts';
import { EXPORT_FIELDS } from '../../../src/modules/exports/fields.ts';

describe('column types', () => {
  const leaf = (version: 'v1' | 'v2_beta', name: string) => columnPlan(EXPORT_FIELDS, version).schema.filter((element) => element.name === name);

  test('the schema has the 29 exportable fields in table order', () => {
    const plan = columnPlan(EXPORT_FIELDS, 'v1');
    assert.equal(plan.schema[0]!.num_children, 29);
    assert.deepEqual(plan.schema.slice(1).map((element) => element.name), EXPORT_FIELDS);
  });

  test('v1: timestamps not adjusted to UTC, lists and JSON as text', () => {
    assert.deepEqual(leaf('v1', 'start_time')[0]!.logical_type, { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MICROS' });
    assert.equal(leaf('v1', 'start_time')[0]!.converted_type, undefined);
    assert.equal(leaf('v1', 'tags')[0]!.converted_type, 'UTF8');
    assert.equal(leaf('v1', 'inputs')[0]!.converted_type, 'UTF8');
    assert.equal(leaf('v1', 'is_root')[0]!.type, 'BOOLEAN');
    assert.equal(leaf('v1', 'total_tokens')[0]!.type, 'INT64');
    assert.equal(leaf('v1', 'total_cost')[0]!.type, 'DOUBLE');
  });

  test('v2_beta: UTC timestamps, LIST<STRING>, JSON logical type', () => {
    assert.deepEqual(leaf('v2_beta', 'first_token_time')[0]!.logical_type, { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' });
    const tags = columnPlan(['tags'], 'v2_beta').schema;
    assert.deepEqual(tags.slice(1).map((element) => [element.name, element.repetition_type]), [['tags', 'OPTIONAL'], ['list', 'REPEATED'], ['element', 'OPTIONAL']]);
    assert.equal(tags[1]!.converted_type, 'LIST');
    assert.deepEqual(leaf('v2_beta', 'outputs')[0]!.logical_type, { type: 'JSON' });
  });

  test('row values are converted per column: microsecond timestamps, int64, JSON text, lists', () => {
    const [id, start, tags, inputs, tokens, cost] = columnPlan(['id', 'start_time', 'tags', 'inputs', 'total_tokens', 'total_cost'], 'v1').toColumns([
      { id: 'a', start_time: '2026-01-01T00:00:00.000001+00:00', tags: ['x', 'y'], inputs: 'just text', total_tokens: 5, total_cost: '0.25' },
      { id: 'b', start_time: '2026-01-01T00:00:01+00:00', tags: null, inputs: null, total_tokens: null, total_cost: null },
    ]);
    assert.deepEqual(id!.data, ['a', 'b']);
    assert.deepEqual(start!.data, [1767225600000001n, 1767225601000000n]);
    assert.deepEqual(tags!.data, ['["x","y"]', null]);
    assert.deepEqual(inputs!.data, ['"just text"', null], 'a JSON string value stays a JSON string');
    assert.deepEqual(tokens!.data, [5n, null]);
    assert.deepEqual(cost!.data, [0.25, null]);
  });
});

describe('PartWriter', () => {
  test('hands over full parts as they fill and the remainder at the end', async () => {
    const parts: number[] = [];
    const writer = new PartWriter(10, async (part) => {
      parts.push(part.byteLength);
    });
    for (let i = 0; i < 25; i++) writer.appendUint8(i);
    await writer.flush();
    assert.deepEqual(parts, [10, 10]);
    for (let i = 0; i < 3; i++) writer.appendUint8(i);
    await writer.finish();
    assert.deepEqual(parts, [10, 10, 8]);
  });

  test('the bytes arrive in order and unchanged', async () => {
    const received: number[] = [];
    const writer = new PartWriter(4, async (part) => {
      received.push(...part);
    });
    for (let i = 0; i < 9; i++) writer.appendUint8(i);
    await writer.flush();
    await writer.finish();
    assert.deepEqual(received, [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  });
});
