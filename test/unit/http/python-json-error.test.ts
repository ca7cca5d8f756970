import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pythonJsonError } from '../../../src/platform/http/validation/python-json-error.ts';

test('accepts what Python accepts', () => {
  for (const text of ['{}', ' [1, 2.5e3, "x\\n", true, null] ', '{"a": {"b": []}}', '"\\u00e9"', 'NaN']) {
    assert.equal(pythonJsonError(text), null, text);
  }
});

test('fails where Python fails, with its messages', () => {
  const cases: [string, number, string][] = [
    ['not json', 0, 'Expecting value'],
    ['', 0, 'Expecting value'],
    ['{"a": 1,}', 8, 'Expecting property name enclosed in double quotes'],
    ['{"a" 1}', 5, "Expecting ':' delimiter"],
    ['{"a": 1 "b": 2}', 8, "Expecting ',' delimiter"],
    ['[1, 2', 5, "Expecting ',' delimiter"],
    ['{"a": "b', 6, 'Unterminated string starting at'],
    ['{} x', 3, 'Extra data'],
    ['["a\\qb"]', 3, 'Invalid \\escape'],
    ['["a\u0001"]', 3, 'Invalid control character at'],
    ['{"a": }', 6, 'Expecting value'],
  ];
  for (const [text, pos, msg] of cases) assert.deepEqual(pythonJsonError(text), { pos, msg }, text);
});
