// jsonContains must agree with PostgreSQL's jsonb @> (packed thread values are filtered in JS, small ones in SQL).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PGlite } from '@electric-sql/pglite';
import { jsonContains } from '../../../src/modules/agents/json-contains.ts';

let pg: PGlite;
before(async () => {
  pg = await PGlite.create('memory://');
});
after(() => pg.close());

const target = {
  messages: [{ type: 'human', content: 'hi', tags: ['a', 'b'] }, { type: 'ai', content: 'hello', n: 2 }],
  count: 3, ratio: 1.5, done: false, none: null, nested: { deep: { x: [1, 2, [3, 4]] } }, text: 'plain',
};
const filters: unknown[] = [
  {}, { count: 3 }, { count: 3.0 }, { count: '3' }, { ratio: 1.5 }, { done: false }, { done: null }, { none: null }, { missing: null },
  { text: 'plain' }, { text: 'pla' }, { messages: [] }, { messages: [{ type: 'ai' }] }, { messages: [{ type: 'ai', content: 'hi' }] },
  { messages: [{ type: 'ai' }, { type: 'human' }] }, { messages: [{ tags: ['b'] }] }, { messages: [{ tags: 'b' }] }, { messages: { type: 'ai' } },
  { messages: 'hi' }, { nested: {} }, { nested: { deep: { x: [2] } } }, { nested: { deep: { x: [[4]] } } }, { nested: { deep: { x: [4] } } },
  { nested: { deep: { x: [[3, 4], 1] } } }, { nested: { deep: [] } }, { count: [3] }, { text: ['plain'] },
];

test('jsonContains agrees with PostgreSQL jsonb @> on objects, arrays, scalars and their mismatches', async () => {
  let matches = 0;
  for (const filter of filters) {
    const [row] = (await pg.query<{ c: boolean }>('SELECT $1::jsonb @> $2::jsonb AS c', [JSON.stringify(target), JSON.stringify(filter)])).rows;
    assert.equal(jsonContains(target, filter), row!.c, JSON.stringify(filter));
    if (row!.c) matches++;
  }
  assert.ok(matches > 5 && matches < filters.length - 5, 'the cases cover both answers');
});
