import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalUuid, uuidErrorText } from '../../../src/platform/http/validation/uuid-error.ts';

test('valid UUID spellings are accepted', () => {
  for (const input of ['0b9e3c1e-4a6f-4c5e-9f3a-2d7b8c9e0f1a', '0B9E3C1E4A6F4C5E9F3A2D7B8C9E0F1A', '{0b9e3c1e-4a6f-4c5e-9f3a-2d7b8c9e0f1a}', 'urn:uuid:0b9e3c1e-4a6f-4c5e-9f3a-2d7b8c9e0f1a']) {
    assert.equal(uuidErrorText(input), null, input);
    assert.equal(canonicalUuid(input), '0b9e3c1e-4a6f-4c5e-9f3a-2d7b8c9e0f1a');
  }
});

test('error texts follow the uuid crate, as pydantic reports them', () => {
  const cases: [string, string][] = [
    ['not-a-uuid', 'invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1'],
    ['123', 'invalid length: expected length 32 for simple format, found 3'],
    ['0b9e3c1e-4a6f-4c5e-9f3a', 'invalid group count: expected 5, found 4'],
    ['0b9e3c1e-4a6f-4c5e-9f3a-2d7b8c9e0f1', 'invalid group length in group 4: expected 12, found 11'],
    ['0b9e3c1-e4a6f-4c5e-9f3a-2d7b8c9e0f1a', 'invalid group length in group 0: expected 8, found 7'],
    ['{0b9e3c1e-4a6f-4c5e-9f3a-2d7b8c9e0fxa}', 'invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `x` at 36'],
    ['', 'invalid length: expected length 32 for simple format, found 0'],
  ];
  for (const [input, expected] of cases) assert.equal(uuidErrorText(input), expected, input);
});
