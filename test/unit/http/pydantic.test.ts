import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { validateBody, validateParameters } from '../../../src/platform/http/validation/pydantic.ts';

const Query = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
  flag: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  kind: Type.Optional(Type.Union([Type.Literal('dev_free'), Type.Literal('dev'), Type.Literal('prod')])),
});

test('query parameters: defaults, lax parsing and every error at once', () => {
  assert.deepEqual(validateParameters(Query, {}, 'query'), { value: { limit: 20, offset: 0 }, issues: [] });
  assert.deepEqual(validateParameters(Query, { limit: '7', flag: 'Off' }, 'query').value, { limit: 7, offset: 0, flag: false });
  const { issues } = validateParameters(Query, { limit: '0', offset: '-1', flag: 'maybe', kind: 'foo' }, 'query');
  assert.deepEqual(issues, [
    { type: 'greater_than_equal', loc: ['query', 'limit'], msg: 'Input should be greater than or equal to 1', input: '0', ctx: { ge: 1 } },
    { type: 'greater_than_equal', loc: ['query', 'offset'], msg: 'Input should be greater than or equal to 0', input: '-1', ctx: { ge: 0 } },
    { type: 'bool_parsing', loc: ['query', 'flag'], msg: 'Input should be a valid boolean, unable to interpret input', input: 'maybe' },
    { type: 'literal_error', loc: ['query', 'kind'], msg: "Input should be 'dev_free', 'dev' or 'prod'", input: 'foo', ctx: { expected: "'dev_free', 'dev' or 'prod'" } },
  ]);
  assert.deepEqual(validateParameters(Query, { limit: 'abc' }, 'query').issues, [
    { type: 'int_parsing', loc: ['query', 'limit'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'abc' },
  ]);
  assert.deepEqual(validateParameters(Query, { limit: '101' }, 'query').issues[0]?.ctx, { le: 100 });
});

const Body = Type.Object({
  name: Type.String(),
  secrets: Type.Array(Type.Object({ name: Type.String(), value: Type.String() }), { maxItems: 2 }),
  config: Type.Object({ repo_url: Type.Optional(Type.Union([Type.String(), Type.Null()])) }),
});

test('body: missing fields carry the enclosing object; nested locations; type errors', () => {
  const input = { name: 'x', config: {} };
  assert.deepEqual(validateBody(Body, input, true).issues, [{ type: 'missing', loc: ['body', 'secrets'], msg: 'Field required', input }]);
  assert.deepEqual(validateBody(Body, undefined, true).issues, [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]);
  const bad = validateBody(Body, { name: 5, secrets: [{ name: 'a' }, 3], config: [] }, true).issues;
  assert.deepEqual(bad.map((item) => [item.type, item.loc]), [
    ['string_type', ['body', 'name']],
    ['missing', ['body', 'secrets', 0, 'value']],
    ['model_attributes_type', ['body', 'secrets', 1]],
    ['model_attributes_type', ['body', 'config']],
  ]);
  const tooMany = validateBody(Body, { name: 'x', config: {}, secrets: [{ name: 'a', value: '' }, { name: 'b', value: '' }, { name: 'c', value: '' }] }, true).issues;
  assert.deepEqual(tooMany[0]?.ctx, { field_type: 'List', max_length: 2, actual_length: 3 });
  assert.equal(tooMany[0]?.msg, 'List should have at most 2 items after validation, not 3');
});

test('uuid format gives uuid_parsing with the crate text in ctx', () => {
  const schema = Type.Object({ id: Type.String({ format: 'uuid' }) });
  const [item] = validateParameters(schema, { id: 'not-a-uuid' }, 'path').issues;
  assert.equal(item?.type, 'uuid_parsing');
  assert.deepEqual(item?.loc, ['path', 'id']);
  assert.equal(item?.msg, 'Input should be a valid UUID, invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1');
});

test('a list query parameter takes every occurrence of its key; past maxItems only too_long is reported', () => {
  const schema = Type.Object({ ids: Type.Array(Type.String({ format: 'uuid' }), { maxItems: 2 }), last: Type.Optional(Type.String()) });
  const a = '6f1c1a2e-1111-4222-8333-444455556666';
  const b = '6F1C1A2E-1111-4222-8333-444455556667';
  assert.deepEqual(validateParameters(schema, { ids: a, last: ['x', 'y'] }, 'query'), { value: { ids: [a], last: 'y' }, issues: [] });
  assert.deepEqual(validateParameters(schema, { ids: [a, b] }, 'query').value, { ids: [a, b.toLowerCase()] });
  assert.deepEqual(validateParameters(schema, {}, 'query').issues, [{ type: 'missing', loc: ['query', 'ids'], msg: 'Field required', input: null }]);
  assert.deepEqual(validateParameters(schema, { ids: [a, 'nope'] }, 'query').issues.map((item) => [item.type, item.loc, item.input]), [['uuid_parsing', ['query', 'ids', 1], 'nope']]);
  assert.deepEqual(validateParameters(schema, { ids: ['nope', a, b] }, 'query').issues, [{
    type: 'too_long', loc: ['query', 'ids'], msg: 'List should have at most 2 items after validation, not 3', input: ['nope', a, b],
    ctx: { field_type: 'List', max_length: 2, actual_length: 3 },
  }]);
});
