// RunScanner, the read path of bulk export: window bounds, keyset pages, field subsets, filter, value types.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestBerth, type TestBerth } from '../helpers/berth.ts';
import { EXPORTABLE_FIELDS, FilterError, RunScanner } from '../../src/modules/tracing/index.ts';

let berth: TestBerth;
let scanner: RunScanner;
const sessionId = randomUUID();
const otherSession = randomUUID();
const ids: string[] = [];

before(async () => {
  berth = await startTestBerth();
  const db = berth.berth.db;
  scanner = new RunScanner(db);
  for (const [id, name] of [[sessionId, 'scan'], [otherSession, 'other']]) {
    await db.query('INSERT INTO tracer_sessions (id, tenant_id, name) VALUES ($1, $2, $3)', [id, berth.workspaceId, name]);
  }
  for (let i = 0; i < 25; i++) {
    const id = randomUUID();
    ids.push(id);
    const start = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString().replace('Z', '123456Z').replace('.000', '.');
    await db.query(
      `INSERT INTO runs (tenant_id, id, session_id, trace_id, dotted_order, name, run_type, start_time, end_time, inputs, tags, total_cost, total_tokens, extra, posted)
       VALUES ($1, $2, $3, $2, $4, $5, $6, $7, $7::timestamptz + interval '2 seconds', $8, $9, $10, $11, $12, true)`,
      [berth.workspaceId, id, sessionId, `x${i}`, `run-${i}`, i % 2 === 0 ? 'llm' : 'chain', start, JSON.stringify({ i }), ['t', `n${i}`], i % 2 === 0 ? '0.25' : null, i, JSON.stringify({ metadata: { even: i % 2 === 0 } })],
    );
  }
  await db.query(
    `INSERT INTO runs (tenant_id, id, session_id, trace_id, dotted_order, name, run_type, start_time, posted) VALUES ($1, $2, $3, $2, 'o', 'other', 'chain', '2026-01-01T00:00:05Z', true)`,
    [berth.workspaceId, randomUUID(), otherSession],
  );
  await db.query(`INSERT INTO feedback (tenant_id, id, run_id, key, score) VALUES ($1, $2, $3, 'correct', 1), ($1, $4, $3, 'correct', 0)`, [berth.workspaceId, randomUUID(), ids[3], randomUUID()]);
});

after(async () => berth.close());

const base = { startTime: '2026-01-01T00:00:00Z', endTime: '2026-01-01T00:00:20Z' };

test('pages through one project in (start_time, id) order with an exclusive end', async () => {
  const seen: string[] = [];
  let cursor: { start_time: string; id: string } | null = null;
  for (;;) {
    const page = await scanner.scan({ tenantId: berth.workspaceId, sessionId, ...base, fields: ['name'], after: cursor, limit: 7 });
    if (page.length === 0) break;
    seen.push(...page.map((row) => row.name as string));
    const last = page.at(-1)!;
    cursor = { start_time: last.start_time, id: last.id };
  }
  assert.deepEqual(seen, Array.from({ length: 20 }, (_, i) => `run-${i}`));
});

test('reads only the requested fields plus the cursor, with wire value types', async () => {
  const [row] = await scanner.scan({ tenantId: berth.workspaceId, sessionId, ...base, fields: ['total_cost', 'tags', 'parent_run_ids', 'is_root', 'inputs', 'end_time', 'status', 'total_tokens', 'feedback_stats'], limit: 1 });
  assert.deepEqual(Object.keys(row!).sort(), ['end_time', 'feedback_stats', 'id', 'inputs', 'is_root', 'parent_run_ids', 'start_time', 'status', 'tags', 'total_cost', 'total_tokens'].sort());
  assert.equal(row!.start_time, '2026-01-01T00:00:00.123456+00:00');
  assert.equal(row!.end_time, '2026-01-01T00:00:02.123456+00:00');
  assert.equal(row!.total_cost, 0.25);
  assert.equal(row!.total_tokens, 0);
  assert.deepEqual(row!.tags, ['t', 'n0']);
  assert.deepEqual(row!.parent_run_ids, []);
  assert.equal(row!.is_root, true);
  assert.equal(row!.status, 'success');
  assert.deepEqual(row!.inputs, { i: 0 });
  assert.equal(row!.feedback_stats, null);
  const [withFeedback] = await scanner.scan({ tenantId: berth.workspaceId, sessionId, ...base, fields: ['feedback_stats'], filter: 'eq(name, "run-3")', limit: 5 });
  assert.deepEqual(withFeedback!.feedback_stats, { correct: { n: 2, avg: 0.5 } });
});

test('applies the filter language and every exportable field can be read', async () => {
  const rows = await scanner.scan({ tenantId: berth.workspaceId, sessionId, ...base, fields: EXPORTABLE_FIELDS, filter: 'and(eq(run_type, "llm"), gte(total_tokens, 10), eq(metadata_key, "even"))', limit: 100 });
  assert.deepEqual(rows.map((row) => row.name), ['run-10', 'run-12', 'run-14', 'run-16', 'run-18']);
  assert.deepEqual(Object.keys(rows[0]!).sort(), [...EXPORTABLE_FIELDS].sort());
  await assert.rejects(scanner.scan({ tenantId: berth.workspaceId, sessionId, ...base, fields: ['id'], filter: 'eq(nme, "x")', limit: 1 }), FilterError);
  await assert.rejects(scanner.scan({ tenantId: berth.workspaceId, sessionId, ...base, fields: ['serialized'], limit: 1 }), TypeError);
});

test('another workspace sees nothing', async () => {
  const rows = await scanner.scan({ tenantId: randomUUID(), sessionId, ...base, fields: ['id'], limit: 10 });
  assert.equal(rows.length, 0);
});
