// Which statements get a PostgreSQL prepared-statement name: only marked ones, one stable name per text,
// and no more than the cap (a statement built with varying placeholders must not grow without bound).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prepared, preparedName } from '../../../src/platform/db/prepared.ts';

test('marked texts get one stable name; unmarked texts none; the number of names is bounded', () => {
  const text = 'SELECT $1::int AS one /* prepared-test */';
  assert.equal(preparedName(text), undefined);
  assert.equal(prepared(text), text);
  const name = preparedName(text);
  assert.match(name ?? '', /^berth_[0-9a-f]{24}$/);
  prepared(text);
  assert.equal(preparedName(text), name);
  assert.notEqual(preparedName(prepared('SELECT $1::int AS two /* prepared-test */')), name);

  const shapes = Array.from({ length: 1000 }, (_, i) => `SELECT ${Array.from({ length: i + 1 }, (_, j) => `$${j + 1}`).join(', ')} /* prepared-test */`);
  for (const shape of shapes) prepared(shape);
  const named = shapes.filter((shape) => preparedName(shape) !== undefined).length;
  assert.ok(named > 0 && named < 300, `named ${named} of ${shapes.length}`);
  assert.equal(preparedName(shapes.at(-1)!), undefined);
});
