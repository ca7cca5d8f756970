// Run queries over HTTP: keyset pages, time window, filter / trace_filter / tree_filter with every kind of
// attribute, malformed and hostile filters answered 400 with a position; projects CRUD; feedback.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestBerth, type TestBerth } from '../helpers/berth.ts';

let berth: TestBerth;
let sessionId: string;
const ids: Record<string, string> = {};

function stamp(iso: string): string {
  return iso.replace(/[-:]/g, '').replace('.', '').replace('Z', '');
}

/** Two traces: "alpha" (chain → llm with tokens, tool that fails) and "beta" (a lone chain with metadata). */
before(async () => {
  berth = await startTestBerth();
  const post: any[] = [];
  const add = (name: string, fields: Record<string, unknown>, parent?: string) => {
    const id = randomUUID();
    ids[name] = id;
    const start = fields.start_time as string;
    const parentRun = parent ? post.find((run) => run.id === ids[parent]) : undefined;
    post.push({
      id, name, run_type: 'chain', session_name: 'query-project', ...fields,
      trace_id: parentRun ? parentRun.trace_id : id,
      dotted_order: `${parentRun ? `${parentRun.dotted_order}.` : ''}${stamp(start)}Z${id}`,
      ...(parentRun ? { parent_run_id: parentRun.id } : {}),
    });
  };
  add('alpha', { start_time: '2026-02-01T00:00:00.000000Z', end_time: '2026-02-01T00:00:10.000000Z', inputs: { question: 'What is a harbor?' }, outputs: { answer: 'A place for ships' }, tags: ['prod', 'v1'], extra: { metadata: { user: 'ada', plan: 'pro' } } });
  add('alpha-llm', { run_type: 'llm', start_time: '2026-02-01T00:00:01.000000Z', end_time: '2026-02-01T00:00:03.500000Z', inputs: { prompt: 'harbor' }, outputs: { text: 'ships', usage_metadata: { input_tokens: 100, output_tokens: 50, total_tokens: 150, total_cost: 0.02 } }, extra: { metadata: { model: 'big' } } }, 'alpha');
  add('alpha-tool', { run_type: 'tool', start_time: '2026-02-01T00:00:04.000000Z', end_time: '2026-02-01T00:00:04.100000Z', error: 'ValueError: Boom', inputs: { q: 1 } }, 'alpha');
  add('beta', { start_time: '2026-02-02T00:00:00.000000Z', inputs: { question: 'Tell me about berths' }, tags: ['dev'], extra: { metadata: { user: 'grace' } } });
  const response = await berth.api('POST', '/runs/batch', { body: { post } });
  assert.equal(response.status, 202, JSON.stringify(response.body));
  const sessions = await berth.api('GET', '/sessions?name=query-project');
  sessionId = sessions.body[0].id;
  assert.equal((await berth.api('POST', '/feedback', { body: { run_id: ids.alpha, key: 'correctness', score: 1 } })).status, 200);
  assert.equal((await berth.api('POST', '/feedback', { body: { run_id: ids['alpha-llm'], key: 'helpful', score: 0.25, comment: 'meh' } })).status, 200);
});
after(async () => berth.close());

async function names(body: Record<string, unknown>): Promise<string[]> {
  const response = await berth.api('POST', '/runs/query', { body: { session: [sessionId], order: 'asc', ...body } });
  assert.equal(response.status, 200, `${JSON.stringify(body)} → ${JSON.stringify(response.body)}`);
  return response.body.runs.map((run: any) => run.name);
}

test('keyset pages in both orders with an opaque cursor', async () => {
  for (const order of ['asc', 'desc'] as const) {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 10; i++) {
      const response: any = await berth.api('POST', '/api/v1/runs/query', { body: { session: [sessionId], limit: 3, order, cursor, select: ['name'] } });
      assert.equal(response.status, 200);
      seen.push(...response.body.runs.map((run: any) => run.name));
      assert.deepEqual(Object.keys(response.body.runs[0]).sort(), ['id', 'name', 'start_time']);
      cursor = response.body.cursors.next;
      if (!cursor) break;
    }
    const expected = ['alpha', 'alpha-llm', 'alpha-tool', 'beta'];
    assert.deepEqual(seen, order === 'asc' ? expected : expected.reverse());
  }
  const bad = await berth.api('POST', '/runs/query', { body: { session: [sessionId], cursor: 'garbage' } });
  assert.equal(bad.status, 400);
  assert.match(bad.body.detail, /Invalid cursor/);
});

test('simple query fields', async () => {
  assert.deepEqual(await names({ is_root: true }), ['alpha', 'beta']);
  assert.deepEqual(await names({ trace: ids.alpha }), ['alpha', 'alpha-llm', 'alpha-tool']);
  assert.deepEqual(await names({ parent_run: ids.alpha }), ['alpha-llm', 'alpha-tool']);
  assert.deepEqual(await names({ run_type: 'llm' }), ['alpha-llm']);
  assert.deepEqual(await names({ error: true }), ['alpha-tool']);
  assert.deepEqual(await names({ id: [ids.beta, ids['alpha-tool']] }), ['alpha-tool', 'beta']);
  assert.deepEqual(await names({ start_time: '2026-02-01T00:00:01Z', end_time: '2026-02-01T00:00:04Z' }), ['alpha-llm']);
  const invalid = await berth.api('POST', '/runs/query', { body: { session: ['nope'], limit: 0, select: ['bogus'], start_time: 'x' } });
  assert.equal(invalid.status, 422);
  assert.deepEqual(invalid.body.detail.map((issue: any) => issue.loc), [['body', 'session', 0], ['body', 'select', 0], ['body', 'limit']]);
});

test('filter attributes and operators select the right runs', async () => {
  const cases: [string, string[]][] = [
    ['eq(name, "beta")', ['beta']],
    ['neq(name, "beta")', ['alpha', 'alpha-llm', 'alpha-tool']],
    ['in(run_type, ["llm", "tool"])', ['alpha-llm', 'alpha-tool']],
    ['like(name, "alpha-%")', ['alpha-llm', 'alpha-tool']],
    ['search(name, "LLM")', ['alpha-llm']],
    ['eq(status, "error")', ['alpha-tool']],
    ['eq(status, "pending")', ['beta']],
    ['gt(latency, "2s")', ['alpha', 'alpha-llm']],
    ['lte(latency, 0.1)', ['alpha-tool']],
    ['gte(total_tokens, 150)', ['alpha-llm']],
    ['lt(total_cost, 1)', ['alpha-llm']],
    ['exists(total_tokens, false)', ['alpha', 'alpha-tool', 'beta']],
    ['gte(start_time, "2026-02-02")', ['beta']],
    ['exists(end_time, false)', ['beta']],
    ['eq(error, true)', ['alpha-tool']],
    ['like(error, "ValueError%")', ['alpha-tool']],
    ['has(tags, "prod")', ['alpha']],
    ['in(tags, ["dev", "v1"])', ['alpha', 'beta']],
    [`has(metadata, '{"user": "ada"}')`, ['alpha']],
    ['exists(metadata, "model")', ['alpha-llm']],
    ['and(eq(metadata_key, "user"), eq(metadata_value, "grace"))', ['beta']],
    ['and(eq(metadata_key, "plan"), eq(metadata_value, "grace"))', []],
    ['neq(metadata_key, "user")', ['alpha-llm', 'alpha-tool']],
    ['and(eq(feedback_key, "helpful"), lt(feedback_score, 0.5))', ['alpha-llm']],
    ['and(eq(feedback_key, "correctness"), eq(feedback_score, 1))', ['alpha']],
    ['and(eq(input_key, "question"), search(input_value, "berths"))', ['beta']],
    ['and(eq(output_key, "text"), eq(output_value, "ships"))', ['alpha-llm']],
    ['eq(is_root, false)', ['alpha-llm', 'alpha-tool']],
    [`eq(trace_id, "${ids.alpha ?? ''}")`, []],
    ['search("harbor")', ['alpha', 'alpha-llm']],
    ['or(eq(name, "beta"), not(eq(is_root, true)))', ['alpha-llm', 'alpha-tool', 'beta']],
    ['and(eq(run_type, "chain"), not(has(tags, "dev")))', ['alpha']],
  ];
  for (const [filter, expected] of cases) {
    const actual = await names({ filter: filter.includes('trace_id') ? `eq(trace_id, "${ids.alpha}")` : filter });
    assert.deepEqual(actual, filter.includes('trace_id') ? ['alpha', 'alpha-llm', 'alpha-tool'] : expected, filter);
  }
  assert.deepEqual(await names({ filter: `eq(parent_run_id, "${ids.alpha}")` }), ['alpha-llm', 'alpha-tool']);
});

test('trace_filter looks at the root, tree_filter at any run of the trace', async () => {
  assert.deepEqual(await names({ trace_filter: 'has(tags, "prod")', filter: 'eq(run_type, "llm")' }), ['alpha-llm']);
  assert.deepEqual(await names({ tree_filter: 'eq(error, true)', is_root: true }), ['alpha']);
  assert.deepEqual(await names({ trace_filter: 'eq(name, "beta")' }), ['beta']);
});

test('malformed filters answer 400 with the position and what was expected', async () => {
  const malformed = [
    'eq(name, "x"', 'eq(name "x")', 'eq(nme, "x")', 'equals(name, "x")', 'eq(name)', 'eq(name, "x", "y")', 'and()', 'and(eq(name, "x"),)',
    'not(eq(name, "x"), eq(name, "y"))', 'eq(name, x)', 'eq(name, "x"))', 'gt(name, "x")', 'gt(total_tokens, "many")', 'gt(latency, "5 parsecs")',
    'gte(start_time, "yesterday")', 'eq(id, "not-a-uuid")', 'has(tags)', 'in(name, "x")', 'in(name, [])', 'exists(name, true)', 'eq(is_root, "maybe")',
    'like(total_tokens, "1%")', 'has(metadata, "{not json")', '"just a string"', 'eq(name, "unterminated)', 'eq(, "x")', ')', 'eq(name, "x") and eq(name, "y")',
    'eq(feedback_score, "x")', 'search()', 'eq(name, [1, 2)', 'eq(name, 1e)', 'eq(name, "x")eq(name, "y")', 'AND(eq(name,"x"))', 'eq(execution_order, 1)',
  ];
  assert.ok(malformed.length >= 30);
  for (const filter of malformed) {
    for (const field of ['filter', 'trace_filter', 'tree_filter']) {
      const response = await berth.api('POST', '/runs/query', { body: { session: [sessionId], [field]: filter } });
      assert.equal(response.status, 400, `${field}=${filter} → ${response.status} ${JSON.stringify(response.body)}`);
      assert.match(response.body.detail, new RegExp(`^${field}: Invalid filter at position \\d+: .+; expected .+`), filter);
    }
  }
  const suggestion = await berth.api('POST', '/runs/query', { body: { filter: 'eq(nme, "x")' } });
  assert.match(suggestion.body.detail, /name/);
});

test('SQL injection attempts through the filter answer 400 and return no data', async () => {
  const attacks = [
    `eq(name, "x"); DROP TABLE runs; --")`,
    `eq(name, "x") OR 1=1`,
    `eq(name; DROP TABLE runs, "x")`,
    `eq("name) OR true --", "x")`,
    `eq(name, 'x' || (SELECT 1))`,
    `or(eq(name, "x"), 1=1)`,
    `eq(name, "x") UNION SELECT * FROM api_keys`,
    `eq(runs.name, "x")`,
    `eq(metadata_key, "a"); SELECT pg_sleep(10)`,
  ];
  for (const filter of attacks) {
    const response = await berth.api('POST', '/runs/query', { body: { session: [sessionId], filter } });
    assert.equal(response.status, 400, `${filter} → ${JSON.stringify(response.body)}`);
    assert.equal(response.body.runs, undefined);
  }
  // Quotes and SQL inside a string value are just characters to compare.
  assert.deepEqual(await names({ filter: `eq(name, "beta' OR '1'='1")` }), []);
  assert.deepEqual(await names({ filter: `search(name, "%'; DROP TABLE runs; --")` }), []);
  assert.equal((await names({})).length, 4);
});

test('projects: create, upsert, list by name with pages, get, patch, delete with its runs', async () => {
  const created = await berth.api('POST', '/sessions', { body: { name: 'crud-a', description: 'first', extra: { metadata: { team: 'x' } } } });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  assert.equal(created.body.run_count, 0);
  assert.equal(created.body.tenant_id, berth.workspaceId);
  assert.equal((await berth.api('POST', '/sessions', { body: { name: 'crud-a' } })).status, 409);
  const upserted = await berth.api('POST', '/sessions?upsert=true', { body: { name: 'crud-a', description: 'second' } });
  assert.equal(upserted.status, 200);
  assert.equal(upserted.body.id, created.body.id);
  assert.equal(upserted.body.description, 'second');
  await berth.api('POST', '/sessions', { body: { name: 'crud-b' } });
  await berth.api('POST', '/sessions', { body: { name: 'crud-c' } });
  const page1 = await berth.api('GET', '/sessions?name_contains=CRUD&limit=2');
  const page2 = await berth.api('GET', '/sessions?name_contains=crud&limit=2&offset=2');
  assert.deepEqual([...page1.body, ...page2.body].map((s: any) => s.name), ['crud-a', 'crud-b', 'crud-c']);
  assert.equal((await berth.api('GET', '/sessions?limit=101')).status, 422);
  const renamed = await berth.api('PATCH', `/sessions/${created.body.id}`, { body: { name: 'crud-renamed' } });
  assert.equal(renamed.body.name, 'crud-renamed');
  assert.equal((await berth.api('PATCH', `/sessions/${created.body.id}`, { body: { name: 'crud-b' } })).status, 409);
  assert.equal((await berth.api('GET', `/sessions/${randomUUID()}`)).status, 404);
  assert.equal((await berth.api('GET', '/sessions/not-a-uuid')).status, 422);

  const project = await berth.api('GET', `/sessions/${sessionId}`);
  assert.equal(project.body.run_count, 4);
  assert.equal(project.body.last_run_start_time, '2026-02-02T00:00:00.000000+00:00');
  // Runs can name their project by id too.
  const byId = randomUUID();
  const posted = await berth.api('POST', '/runs', { body: { id: byId, name: 'by-id', run_type: 'chain', start_time: '2026-02-03T00:00:00Z', session_id: created.body.id } });
  assert.equal(posted.status, 202, JSON.stringify(posted.body));
  const unknownProject = await berth.api('POST', '/runs', { body: { id: randomUUID(), name: 'x', run_type: 'chain', start_time: '2026-02-03T00:00:00Z', session_id: randomUUID() } });
  assert.equal(unknownProject.status, 422);
  assert.match(unknownProject.body.detail[0].msg, /Project .* not found/);
  await berth.api('POST', '/feedback', { body: { run_id: byId, key: 'k', score: 1 } });
  assert.equal((await berth.api('DELETE', `/sessions/${created.body.id}`)).status, 202);
  assert.equal((await berth.api('GET', `/runs/${byId}`)).status, 404);
  assert.deepEqual((await berth.api('GET', `/feedback?run=${byId}`)).body, []);
  assert.equal((await berth.api('DELETE', `/sessions/${created.body.id}`)).status, 404);
  // Tracing into the deleted project's name creates it afresh.
  const again = await berth.api('POST', '/runs', { body: { id: randomUUID(), name: 'again', run_type: 'chain', start_time: '2026-02-03T00:00:00Z', session_name: 'crud-renamed' } });
  assert.equal(again.status, 202, JSON.stringify(again.body));
  assert.equal((await berth.api('GET', '/sessions?name=crud-renamed')).body[0].run_count, 1);
});

test('feedback: create, read, list, validation', async () => {
  const created = await berth.api('POST', '/feedback', { body: { run_id: ids.beta, key: 'style', score: false, value: { label: 'terse' }, comment: 'short' } });
  assert.equal(created.status, 200);
  assert.equal(created.body.score, 0);
  assert.equal(created.body.session_id, sessionId);
  assert.deepEqual(created.body.value, { label: 'terse' });
  assert.equal((await berth.api('GET', `/feedback/${created.body.id}`)).body.comment, 'short');
  const listed = await berth.api('GET', `/feedback?run=${ids.beta}&key=style`);
  assert.deepEqual(listed.body.map((f: any) => f.id), [created.body.id]);
  const invalid = await berth.api('POST', '/feedback', { body: { run_id: 'x', score: 'high' } });
  assert.equal(invalid.status, 422);
  assert.deepEqual(invalid.body.detail.map((issue: any) => issue.loc), [['body', 'run_id'], ['body', 'key']]);
  const badScore = await berth.api('POST', '/feedback', { body: { run_id: ids.beta, key: 'k', score: 'high' } });
  assert.equal(badScore.status, 422);
  const run = await berth.api('GET', `/runs/${ids.beta}`);
  assert.deepEqual(run.body.feedback_stats, { style: { n: 1, avg: 0 } });
  assert.equal((await berth.api('DELETE', `/feedback/${created.body.id}`)).status, 202);
  assert.equal((await berth.api('GET', `/feedback/${created.body.id}`)).status, 404);
});

test('NUL characters and impossible times answer 4xx, never 500', async () => {
  const cases: [string, string, unknown, number][] = [
    ['POST', '/runs/query', { filter: 'eq(name, "a\u0000b")' }, 400],
    ['POST', '/runs/query', { run_type: 'a\u0000b' }, 422],
    ['POST', '/runs/query', { start_time: '0000-01-01T00:00:00Z' }, 422],
    ['GET', '/sessions?name=a%00b', undefined, 422],
    ['POST', '/sessions', { name: 'a\u0000b' }, 422],
    ['PATCH', `/sessions/${randomUUID()}`, { name: 'z\u0000' }, 422],
    ['POST', '/feedback', { run_id: randomUUID(), key: 'a\u0000', comment: 'x' }, 422],
    ['POST', '/runs', { id: randomUUID(), name: 'x', run_type: 'chain', start_time: '0000-01-01T00:00:00Z' }, 422],
    ['POST', '/runs', { id: randomUUID(), name: 'x', run_type: 'chain', start_time: '2026-01-01T00:00:00Z', session_name: 'a\u0000' }, 422],
    ['POST', '/runs', { id: randomUUID(), name: 'x', run_type: 'chain', start_time: '2026-01-01T24:00:00Z' }, 422],
  ];
  for (const [method, path, body, status] of cases) {
    const response = await berth.api(method, path, body === undefined ? {} : { body });
    assert.equal(response.status, status, `${method} ${path} ${JSON.stringify(body)} → ${JSON.stringify(response.body)}`);
  }
});
