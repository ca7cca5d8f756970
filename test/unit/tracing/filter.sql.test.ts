import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect, sql } from 'kysely';
import { getAttribute } from '../../../src/modules/tracing/filter/attributes.ts';
import { attributeNames, compileFilter, FilterError, parseFilter } from '../../../src/modules/tracing/filter/index.ts';
import { FEEDBACK_TABLE_DDL, RUNS_TABLE_DDL } from '../../../src/modules/tracing/filter/test-schema.ts';

const T1 = '11111111-1111-4111-8111-111111111111';
const T2 = '22222222-2222-4222-8222-222222222222';
const SESSION = '33333333-3333-4333-8333-333333333333';
const EXAMPLE = '44444444-4444-4444-8444-444444444444';
const RUN_IDS = {
  r1: 'a0000000-0000-4000-8000-000000000001',
  r2: 'a0000000-0000-4000-8000-000000000002',
  r3: 'a0000000-0000-4000-8000-000000000003',
  r4: 'a0000000-0000-4000-8000-000000000004',
  r5: 'a0000000-0000-4000-8000-000000000005',
} as const;
type Label = keyof typeof RUN_IDS;
const LABELS = new Map<string, string>(Object.entries(RUN_IDS).map(([label, id]) => [id, label]));
const { r1, r2, r3, r4, r5 } = RUN_IDS;
const ALL: Label[] = ['r1', 'r2', 'r3', 'r4', 'r5'];

interface RunRow {
  tenant_id: string;
  id: string;
  trace_id: string;
  parent_run_id?: string;
  is_root: boolean;
  name: string;
  run_type: string;
  status: string;
  start_time: string;
  end_time?: string;
  inputs?: unknown;
  outputs?: unknown;
  error?: string;
  extra?: unknown;
  tags: string[];
  reference_example_id?: string;
  total_tokens?: number;
  prompt_tokens?: number;
  completion_tokens?: number;
  total_cost?: string;
  prompt_cost?: string;
  completion_cost?: string;
  first_token_time?: string;
}

const RUNS: RunRow[] = [
  {
    tenant_id: T1, id: r1, trace_id: r1, is_root: true, name: 'RetrieveDocs', run_type: 'chain', status: 'success',
    start_time: '2024-01-01T00:00:00Z', end_time: '2024-01-01T00:00:02Z', tags: ['beta', 'experimental'],
    extra: { metadata: { thread_id: 'abc', env: 'prod', n: 5, flag: true } },
    inputs: { question: 'What is image classification?' }, outputs: { answer: 'A way to label pictures' },
    total_tokens: 100, prompt_tokens: 60, completion_tokens: 40, total_cost: '0.001', prompt_cost: '0.0006', completion_cost: '0.0004',
  },
  {
    tenant_id: T1, id: r2, trace_id: r1, parent_run_id: r1, is_root: false, name: 'ExpandQuery', run_type: 'llm', status: 'success',
    start_time: '2024-01-01T00:00:00.5Z', end_time: '2024-01-01T00:00:07.5Z', first_token_time: '2024-01-01T00:00:01Z',
    tags: ['beta'], extra: { metadata: { thread_id: 'xyz', env: 'dev' } },
    inputs: { messages: [{ content: 'expand' }] }, outputs: { text: 'expanded' },
    total_tokens: 6000, prompt_tokens: 5000, completion_tokens: 1000, total_cost: '0.06', prompt_cost: '0.05', completion_cost: '0.01',
  },
  {
    tenant_id: T1, id: r3, trace_id: r3, is_root: true, name: 'Classifier', run_type: 'tool', status: 'error',
    error: 'ValueError: Boom', start_time: '2024-01-02T00:00:00Z', end_time: '2024-01-02T00:00:12Z', tags: [],
    extra: { metadata: { env: 'prod', session_id: 'abc', missing: null } }, inputs: { image: 'cat.png' },
  },
  {
    // Still running, with deliberately odd JSON shapes that must not break queries over the project.
    tenant_id: T1, id: r4, trace_id: r4, is_root: true, name: `it's "quoted" \\ back`, run_type: 'chain', status: 'pending',
    start_time: '2024-01-03T00:00:00Z', tags: ["it's"], extra: { metadata: 'oops' }, inputs: [1, 2], outputs: 'text',
    reference_example_id: EXAMPLE,
  },
  {
    tenant_id: T1, id: r5, trace_id: r5, is_root: true, name: 'retrievedocs-v2', run_type: 'retriever', status: 'success',
    start_time: '2024-01-04T00:00:00+02:00', end_time: '2024-01-03T22:00:05Z', tags: ['experimental'],
    inputs: { query: 'dogs', k: 3 }, outputs: { docs: [] }, total_tokens: 5000, total_cost: '0.05',
  },
  {
    // Same run id in another tenant: tenant scoping of the feedback join is what keeps it out.
    tenant_id: T2, id: r5, trace_id: r5, is_root: true, name: 'RetrieveDocs', run_type: 'chain', status: 'success',
    start_time: '2024-01-04T00:00:00Z', tags: [],
  },
];

const FEEDBACK: Array<[tenant: string, run: string, key: string, score: number | null]> = [
  [T1, r1, 'correctness', 1],
  [T1, r1, 'user_score', 0],
  [T1, r2, 'user_score', 1],
  [T1, r3, 'correctness', 0],
  [T1, r3, 'note', null],
  [T2, r5, 'correctness', 1],
];

let pglite: PGlite;
let db: Kysely<unknown>;

before(async () => {
  pglite = new PGlite();
  db = new Kysely<unknown>({ dialect: new PGliteDialect({ pglite }) });
  await sql.raw(RUNS_TABLE_DDL).execute(db);
  await sql.raw(FEEDBACK_TABLE_DDL).execute(db);
  for (const run of RUNS) {
    const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));
    await sql`INSERT INTO runs (tenant_id, id, session_id, trace_id, parent_run_id, dotted_order, is_root, name, run_type, status,
        start_time, end_time, inputs, outputs, error, extra, tags, reference_example_id, total_tokens, prompt_tokens,
        completion_tokens, total_cost, prompt_cost, completion_cost, first_token_time)
      VALUES (${run.tenant_id}, ${run.id}, ${SESSION}, ${run.trace_id}, ${run.parent_run_id ?? null},
        ${run.parent_run_id === undefined ? `20240101T000000000000Z${run.id}` : `20240101T000000000000Z${run.trace_id}.20240101T000000500000Z${run.id}`},
        ${run.is_root}, ${run.name}, ${run.run_type}, ${run.status}, ${run.start_time}, ${run.end_time ?? null},
        ${json(run.inputs)}::jsonb, ${json(run.outputs)}::jsonb, ${run.error ?? null}, ${json(run.extra)}::jsonb,
        ${run.tags}::text[], ${run.reference_example_id ?? null}, ${run.total_tokens ?? null}, ${run.prompt_tokens ?? null},
        ${run.completion_tokens ?? null}, ${run.total_cost ?? null}, ${run.prompt_cost ?? null}, ${run.completion_cost ?? null},
        ${run.first_token_time ?? null})`.execute(db);
  }
  let n = 0;
  for (const [tenant, run, key, score] of FEEDBACK) {
    n++;
    const id = `f0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    await sql`INSERT INTO feedback (tenant_id, id, run_id, key, score) VALUES (${tenant}, ${id}, ${run}, ${key}, ${score})`.execute(db);
  }
});

after(async () => {
  await db.destroy();
});

/** The labels of the tenant-1 runs a filter selects, sorted. */
async function select(filter: string): Promise<string[]> {
  const where = compileFilter(parseFilter(filter), { runAlias: 'r' });
  const result = await sql<{ id: string }>`SELECT r.id FROM runs r WHERE r.tenant_id = ${T1} AND ${where} ORDER BY r.id`.execute(db);
  return result.rows.map((row) => LABELS.get(row.id) ?? row.id);
}

const cases: Array<[filter: string, expected: Label[]]> = [
  // text attributes
  ['eq(name, "RetrieveDocs")', ['r1']],
  ['neq(name, "RetrieveDocs")', ['r2', 'r3', 'r4', 'r5']],
  ['search(name, "retrievedocs")', ['r1', 'r5']],
  ['like(name, "Retrieve%")', ['r1']],
  ['like(name, "%docs%")', ['r5']],
  ['like(name, "Expand_uery")', ['r2']],
  ['in(run_type, ["llm", "tool"])', ['r2', 'r3']],
  ['eq(status, "error")', ['r3']],
  ['like(dotted_order, "%.%")', ['r2']],
  // Filter text %\\\\ back is the LIKE pattern %\\ back: a literal backslash.
  [String.raw`like(name, "%\\\\ back")`, ['r4']],
  [String.raw`like(name, "%\\\\\\\\ back")`, []],
  [String.raw`like(name, "Expand\\_uery")`, []],
  [`eq(name, 'it\\'s "quoted" \\\\ back')`, ['r4']],
  // identifiers
  [`eq(id, "${r2}")`, ['r2']],
  [`in(id, ["${r1}", "${r3.toUpperCase()}"])`, ['r1', 'r3']],
  [`eq(trace_id, "${r1}")`, ['r1', 'r2']],
  [`eq(parent_run_id, "${r1}")`, ['r2']],
  ['eq(parent_run_id, null)', ['r1', 'r3', 'r4', 'r5']],
  ['exists(parent_run_id, true)', ['r2']],
  ['neq(reference_example_id, null)', ['r4']],
  [`eq(reference_example_id, "${EXAMPLE}")`, ['r4']],
  [`eq(session_id, "${SESSION}")`, ALL],
  ['eq(is_root, true)', ['r1', 'r3', 'r4', 'r5']],
  ['eq(is_root, false)', ['r2']],
  ['neq(is_root, true)', ['r2']],
  // timestamps as ISO strings
  ['gt(start_time, "2024-01-02T00:00:00Z")', ['r4', 'r5']],
  ['gte(start_time, "2024-01-02T00:00:00Z")', ['r3', 'r4', 'r5']],
  ['lt(start_time, "2024-01-01T00:00:01Z")', ['r1', 'r2']],
  ['lte(start_time, "2024-01-01")', ['r1']],
  ['eq(start_time, "2024-01-03T22:00:00Z")', ['r5']],
  ['eq(start_time, "2024-01-04T00:00:00+02:00")', ['r5']],
  ['eq(start_time, "2024-01-01T00:00:00.500000Z")', ['r2']],
  ['eq(end_time, null)', ['r4']],
  ['exists(end_time, true)', ['r1', 'r2', 'r3', 'r5']],
  ['exists(first_token_time, true)', ['r2']],
  ['gt(first_token_time, "2024-01-01T00:00:00Z")', ['r2']],
  // latency
  ['gt(latency, "5s")', ['r2', 'r3']],
  ['gte(latency, "5s")', ['r2', 'r3', 'r5']],
  ['lt(latency, 5)', ['r1']],
  ['gt(latency, "0.1m")', ['r2', 'r3']],
  ['lte(latency, "2000ms")', ['r1']],
  ['eq(latency, 7)', ['r2']],
  ['eq(latency, null)', ['r4']],
  ['exists(latency, false)', ['r4']],
  // tokens and cost
  ['gt(total_tokens, 5000)', ['r2']],
  ['gte(total_tokens, 5000)', ['r2', 'r5']],
  ['eq(total_tokens, null)', ['r3', 'r4']],
  ['neq(total_tokens, 100)', ['r2', 'r3', 'r4', 'r5']],
  ['in(total_tokens, [100, 5000])', ['r1', 'r5']],
  ['gt(total_tokens, 99.5)', ['r1', 'r2', 'r5']],
  ['not(gt(total_tokens, 1000))', ['r1', 'r3', 'r4']],
  ['lt(prompt_tokens, 100)', ['r1']],
  ['gte(completion_tokens, 1000)', ['r2']],
  ['gt(total_cost, 0.01)', ['r2', 'r5']],
  ['eq(total_cost, 0.001)', ['r1']],
  ['lt(prompt_cost, 1e-3)', ['r1']],
  ['eq(completion_cost, 0.01)', ['r2']],
  // error
  ['neq(error, null)', ['r3']],
  ['eq(error, null)', ['r1', 'r2', 'r4', 'r5']],
  ['eq(error, true)', ['r3']],
  ['eq(error, false)', ['r1', 'r2', 'r4', 'r5']],
  ['neq(error, true)', ['r1', 'r2', 'r4', 'r5']],
  ['exists(error, true)', ['r3']],
  ['search(error, "boom")', ['r3']],
  ['like(error, "ValueError%")', ['r3']],
  ['eq(error, "ValueError: Boom")', ['r3']],
  ['neq(error, "ValueError: Boom")', ['r1', 'r2', 'r4', 'r5']],
  // tags
  ['has(tags, "beta")', ['r1', 'r2']],
  ['has(tags, "experimental")', ['r1', 'r5']],
  ['in(tags, ["beta", "experimental"])', ['r1', 'r2', 'r5']],
  ['not(has(tags, "beta"))', ['r3', 'r4', 'r5']],
  [`has(tags, "it's")`, ['r4']],
  ['and(or(has(tags, "experimental"), has(tags, "beta")), gt(latency, 2))', ['r2', 'r5']],
  // metadata object
  [`has(metadata, '{"env": "prod"}')`, ['r1', 'r3']],
  [`has(metadata, '{"n": 5, "flag": true}')`, ['r1']],
  [`not(has(metadata, '{"foo": "bar"}'))`, ALL],
  ['exists(metadata, "session_id")', ['r3']],
  ['exists(metadata, "oops")', []],
  // metadata key/value pairs: the same entry, never one entry's key with another's value
  ['and(eq(metadata_key, "thread_id"), eq(metadata_value, "abc"))', ['r1']],
  ['eq(metadata_value, "abc")', ['r1', 'r3']],
  ['eq(metadata_key, "thread_id")', ['r1', 'r2']],
  ['and(in(metadata_key, ["session_id", "conversation_id", "thread_id"]), eq(metadata_value, "abc"))', ['r1', 'r3']],
  ['and(eq(metadata_key, "env"), eq(metadata_value, "abc"))', []],
  ['and(eq(metadata_key, "thread_id"), eq(metadata_value, "prod"))', []],
  ['neq(metadata_key, "thread_id")', ['r3', 'r4', 'r5']],
  ['eq(metadata_value, 5)', ['r1']],
  ['eq(metadata_value, true)', ['r1']],
  ['and(eq(metadata_key, "thread_id"), eq(metadata_value, "abc"), eq(metadata_key, "env"), eq(metadata_value, "prod"))', ['r1']],
  ['and(eq(metadata_key, "thread_id"), eq(metadata_value, "abc"), eq(metadata_key, "env"), eq(metadata_value, "dev"))', []],
  ['and(eq(metadata_value, "xyz"), eq(metadata_key, "thread_id"))', ['r2']],
  ['and(eq(metadata_key, "thread_id"), neq(metadata_key, "session_id"), eq(metadata_value, "abc"))', ['r1']],
  ['or(eq(metadata_key, "thread_id"), eq(metadata_value, "abc"))', ['r1', 'r2', 'r3']],
  ['and(eq(metadata_key, "env"), and(eq(metadata_key, "thread_id"), eq(metadata_value, "xyz")))', ['r2']],
  ['search(metadata_value, "AB")', ['r1', 'r3']],
  ['like(metadata_key, "thread%")', ['r1', 'r2']],
  ['in(metadata_value, ["xyz", "abc"])', ['r1', 'r2', 'r3']],
  ['and(eq(metadata_key, "missing"), eq(metadata_value, null))', ['r3']],
  ['and(eq(metadata_key, "env"), eq(metadata_value, null))', []],
  // inputs and outputs, top-level keys
  ['eq(input_key, "question")', ['r1']],
  ['and(eq(input_key, "query"), eq(input_value, "dogs"))', ['r5']],
  ['and(eq(input_key, "query"), eq(input_value, 3))', []],
  ['and(eq(input_key, "k"), eq(input_value, 3))', ['r5']],
  ['like(input_value, "%content%")', ['r2']],
  ['search(input_value, "IMAGE")', ['r1']],
  ['search(input_key, "IMAGE")', ['r3']],
  ['eq(output_key, "answer")', ['r1']],
  ['search(output_value, "expanded")', ['r2']],
  ['neq(output_key, "answer")', ['r2', 'r3', 'r4', 'r5']],
  ['and(eq(output_key, "text"), eq(input_key, "messages"))', ['r2']],
  // feedback, scoped by tenant
  ['eq(feedback_key, "correctness")', ['r1', 'r3']],
  ['and(eq(feedback_key, "user_score"), eq(feedback_score, 1))', ['r2']],
  ['and(eq(feedback_key, "correctness"), eq(feedback_score, 0.0))', ['r3']],
  ['and(eq(feedback_key, "correctness"), eq(feedback_score, 0))', ['r3']],
  ['gt(feedback_score, 0.5)', ['r1', 'r2']],
  ['and(eq(feedback_key, "user_score"), gte(feedback_score, 0), lt(feedback_score, 0.5))', ['r1']],
  ['and(gt(feedback_score, 0.5), lt(feedback_score, 0.5))', []],
  ['neq(feedback_key, "correctness")', ['r2', 'r4', 'r5']],
  ['in(feedback_key, ["user_score", "note"])', ['r1', 'r2', 'r3']],
  ['and(eq(is_root, true), and(eq(feedback_key, "user_score"), eq(feedback_score, 1)))', []],
  ['and(eq(is_root, true), eq(feedback_key, "user_score"))', ['r1']],
  ['and(eq(feedback_key, "note"), eq(feedback_score, 0))', []],
  // keyword search
  ['search("image classification")', ['r1']],
  ['search("IMAGE")', ['r1', 'r3']],
  ['search("boom")', ['r3']],
  ['search("classification dogs")', []],
  ['search("dogs")', ['r5']],
  // combinations from the docs
  ['and(eq(run_type, "chain"), gt(latency, 1), gt(total_tokens, 50))', ['r1']],
  ['and(gt(start_time, "2023-07-15T12:34:56Z"), or(neq(error, null), and(eq(feedback_key, "correctness"), eq(feedback_score, 1))))', ['r1', 'r3']],
  ['or(eq(name, "Classifier"), and(not(eq(is_root, true)), has(tags, "beta")))', ['r2', 'r3']],
  ['and(eq(name, "RetrieveDocs"))', ['r1']],
];

describe('compileFilter on PGlite: which runs each filter selects', () => {
  for (const [filter, expected] of cases) {
    it(filter, async () => {
      assert.deepEqual(await select(filter), expected);
    });
  }
});

describe('compileFilter: runAlias for trace_filter and tree_filter', () => {
  /** Runs of tenant 1 whose trace's root run matches `rootFilter`. */
  async function byRoot(rootFilter: string): Promise<string[]> {
    const where = compileFilter(parseFilter(rootFilter), { runAlias: 'root' });
    const result = await sql<{ id: string }>`SELECT r.id FROM runs r WHERE r.tenant_id = ${T1} AND EXISTS (
        SELECT 1 FROM runs root WHERE root.tenant_id = r.tenant_id AND root.id = r.trace_id AND ${where}) ORDER BY r.id`.execute(db);
    return result.rows.map((row) => LABELS.get(row.id) ?? row.id);
  }

  /** Runs of tenant 1 matching `runFilter` whose trace has some run matching `treeFilter`. */
  async function byTree(runFilter: string, treeFilter: string): Promise<string[]> {
    const run = compileFilter(parseFilter(runFilter), { runAlias: 'r' });
    const tree = compileFilter(parseFilter(treeFilter), { runAlias: 'tree_run' });
    const result = await sql<{ id: string }>`SELECT r.id FROM runs r WHERE r.tenant_id = ${T1} AND ${run} AND EXISTS (
        SELECT 1 FROM runs tree_run WHERE tree_run.tenant_id = r.tenant_id AND tree_run.trace_id = r.trace_id AND ${tree})
        ORDER BY r.id`.execute(db);
    return result.rows.map((row) => LABELS.get(row.id) ?? row.id);
  }

  it('applies a trace_filter to the root run of each trace', async () => {
    assert.deepEqual(await byRoot('eq(name, "RetrieveDocs")'), ['r1', 'r2']);
    assert.deepEqual(await byRoot('and(eq(feedback_key, "user_score"), eq(feedback_score, 0))'), ['r1', 'r2']);
    assert.deepEqual(await byRoot('and(eq(metadata_key, "thread_id"), eq(metadata_value, "abc"))'), ['r1', 'r2']);
  });

  it('applies a tree_filter to any run of the trace', async () => {
    assert.deepEqual(await byTree('eq(is_root, true)', 'eq(name, "ExpandQuery")'), ['r1']);
    assert.deepEqual(await byTree('eq(name, "RetrieveDocs")', 'and(eq(feedback_key, "user_score"), eq(feedback_score, 1))'), ['r1']);
  });

  it('refuses aliases that are not plain identifiers or that the subqueries use', () => {
    const node = parseFilter('eq(name, "x")');
    for (const alias of ['', 'r; drop table runs', 'r.x', '"r"', 'filter_fb', 'filter_kv', '1r']) {
      assert.throws(() => compileFilter(node, { runAlias: alias }), TypeError, alias);
    }
  });
});

describe('compileFilter: injection attempts', () => {
  const literalAttempts = [
    `eq(name, "'); drop table runs; --")`,
    `eq(name, '\\'; DELETE FROM runs WHERE true; --')`,
    `like(name, "%' OR '1'='1")`,
    `search("'; drop table feedback; --")`,
    `eq(metadata_key, "x') OR 1=1 --")`,
    String.raw`has(metadata, "{\"a\": \"'); drop table runs; --\"}")`,
    `has(tags, "\\\\' OR true --")`,
    `in(name, ["a", "b'); drop table runs; --"])`,
    `eq(name, "💥 ünïcödé \\u202e \\\\ back")`,
    `eq(name, "$1")`,
    `eq(name, "\\\\x00")`,
    `and(eq(feedback_key, "x'); drop table feedback; --"), gt(feedback_score, 0))`,
    `search(input_value, "%'; select pg_sleep(10); --")`,
  ];
  const rejectedAttempts = [
    'eq(name; drop table runs, "x")',
    'eq(name, "x")); drop table runs; --',
    'eq(name, $1)',
    'eq(name, "\u202e\u0000")',
    `gt(start_time, "2024-01-01'; drop table runs; --")`,
    `eq(id, "0e01bf50-474d-4536-810f-67d3ee7ea3e7'; --")`,
    'eq(name, "x") OR 1=1',
    'eq(name, "x") -- comment',
    `gt(total_tokens, "1; drop table runs")`,
    'eq(na\u00efve, "x")',
  ];

  async function assertTablesIntact(): Promise<void> {
    const runs = await sql<{ n: number }>`SELECT count(*)::int AS n FROM runs`.execute(db);
    const feedback = await sql<{ n: number }>`SELECT count(*)::int AS n FROM feedback`.execute(db);
    assert.equal(runs.rows[0]?.n, RUNS.length);
    assert.equal(feedback.rows[0]?.n, FEEDBACK.length);
  }

  for (const filter of literalAttempts) {
    it(`treats ${filter} as a literal that matches nothing`, async () => {
      assert.deepEqual(await select(filter), []);
      await assertTablesIntact();
    });
  }

  for (const filter of rejectedAttempts) {
    it(`rejects ${JSON.stringify(filter)}`, async () => {
      await assert.rejects(select(filter), FilterError);
      await assertTablesIntact();
    });
  }

  it('never puts user text into the SQL string', () => {
    const compiled = sql`SELECT 1 FROM runs r WHERE ${compileFilter(parseFilter(literalAttempts[0] ?? ''), { runAlias: 'r' })}`.compile(db);
    assert.ok(!compiled.sql.includes('drop'), compiled.sql);
    assert.deepEqual(compiled.parameters, [`'); drop table runs; --`]);
    const filter = String.raw`and(eq(metadata_key, "k'"), has(metadata, "{\"x\": \"y'\"}"))`;
    const pairs = sql`${compileFilter(parseFilter(filter), { runAlias: 'r' })}`.compile(db);
    assert.ok(!pairs.sql.includes("k'") && !pairs.sql.includes('"x"'), pairs.sql);
  });
});

describe('compileFilter: every generated filter executes', () => {
  it('runs random combinations of valid comparisons without SQL errors', async () => {
    let seed = 20240101;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x80000000;
    };
    const pool = cases.map(([filter]) => filter);
    const build = (depth: number): string => {
      const roll = random();
      if (depth > 3 || roll < 0.4) return pool[Math.floor(random() * pool.length)] ?? 'eq(name, "x")';
      if (roll < 0.55) return `not(${build(depth + 1)})`;
      const count = 1 + Math.floor(random() * 4);
      const args = Array.from({ length: count }, () => build(depth + 1));
      return `${roll < 0.8 ? 'and' : 'or'}(${args.join(', ')})`;
    };
    for (let i = 0; i < 150; i++) {
      const filter = build(0);
      await assert.doesNotReject(select(filter), filter);
    }
  });
});

describe('compileFilter: anything that parses also executes', () => {
  it('random values for every attribute and operator', async () => {
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x80000000;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const chars = ['a', 'Z', ' ', "'", '"', '\\', '%', '_', 'é', 'İ', '日', '😀', '\uFFFE', '\n', '\t', '$', '?', ';', '-', '*', '\u202e'];
    const text = (): string => Array.from({ length: Math.floor(random() * 8) }, () => pick(chars)).join('');
    const quoted = (value: string): string => JSON.stringify(value);
    const numbers = ['0', '-0', '1', '-1.5', '1e308', '-1e308', '1e-400', '9007199254740993', '0.000001', '123456789012345678901234567890', '3'];
    const timestamps = ['0001-01-01T00:00:00+15:59', '9999-12-31T23:59:59.999999999-15:59', '2024-02-29', '2024-01-01 00:00',
      '2024-06-30T12:00:00.5+05:30', '2024-01-01T00:00:02Z'];
    const durations = ['"0ms"', '0', '"999999999999d"', '"1.123456789s"', '"2.5m"', '7', '1e-400'];

    const value = (attribute: string, op: string): string => {
      const kind = getAttribute(attribute)?.kind;
      if (op === 'in') return `[${Array.from({ length: 1 + Math.floor(random() * 3) }, () => value(attribute, 'eq')).join(', ')}]`;
      if (op === 'exists') return kind === 'metadata' ? quoted(text() || 'k') : pick(['true', 'false']);
      if (op === 'has') return kind === 'metadata' ? quoted(JSON.stringify({ [text()]: pick([text(), 1.5, null, [true]]) })) : quoted(text());
      if (op === 'like' || op === 'search') return quoted(text());
      if ((op === 'eq' || op === 'neq') && getAttribute(attribute)?.nullable && random() < 0.2) return 'null';
      switch (kind) {
        case 'uuid':
          return quoted(random() < 0.5 ? r1 : crypto.randomUUID().toUpperCase());
        case 'timestamp':
          return quoted(pick(timestamps));
        case 'latency':
          return pick(durations);
        case 'number':
        case 'feedbackScore':
          return pick(numbers);
        case 'boolean':
          return pick(['true', 'false']);
        case 'entryValue':
          return pick([quoted(text()), pick(numbers), 'true']);
        case 'error':
          return pick([quoted(text()), 'true', 'false']);
        default:
          return quoted(text());
      }
    };
    const comparison = (): string => {
      const attribute = pick(attributeNames);
      const op = pick(getAttribute(attribute)?.ops ?? ['eq']);
      return `${op}(${attribute}, ${value(attribute, op)})`;
    };

    let executed = 0;
    for (let i = 0; i < 400; i++) {
      const filter = random() < 0.5 ? comparison() : `${pick(['and', 'or'])}(${comparison()}, ${comparison()}, ${comparison()})`;
      try {
        parseFilter(filter);
      } catch (error) {
        if (error instanceof FilterError) continue;
        throw error;
      }
      await assert.doesNotReject(select(filter), filter);
      executed++;
    }
    assert.ok(executed > 250, `only ${executed} random filters parsed`);
  });
});
