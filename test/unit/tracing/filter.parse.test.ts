import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { getAttribute } from '../../../src/modules/tracing/filter/attributes.ts';
import {
  attributeNames,
  compileFilter,
  FilterError,
  isBlankFilter,
  MAX_FILTER_DEPTH,
  MAX_FILTER_LENGTH,
  parseFilter,
} from '../../../src/modules/tracing/filter/index.ts';
import type { ComparisonNode, FilterNode } from '../../../src/modules/tracing/filter/index.ts';

const UUID = '0e01bf50-474d-4536-810f-67d3ee7ea3e7';

function comparison(text: string): ComparisonNode {
  const node = parseFilter(text);
  assert.equal(node.kind, 'comparison');
  return node as ComparisonNode;
}

function parseError(text: string): FilterError {
  try {
    parseFilter(text);
  } catch (error) {
    assert.ok(error instanceof FilterError, `expected a FilterError for ${JSON.stringify(text)}, got ${String(error)}`);
    return error;
  }
  assert.fail(`expected ${JSON.stringify(text)} to be rejected`);
}

/** A value each attribute kind accepts under each operator, for the exhaustive table test. */
function sampleValue(attribute: string, op: string): string {
  const kind = getAttribute(attribute)?.kind;
  if (op === 'in') {
    if (kind === 'uuid') return `["${UUID}"]`;
    if (kind === 'number' || kind === 'feedbackScore') return '[1, 2.5]';
    return '["a", "b"]';
  }
  if (op === 'exists') return kind === 'metadata' ? '"tenant_id"' : 'true';
  if (op === 'has') return kind === 'metadata' ? `'{"foo": "bar"}'` : '"beta"';
  if (op === 'like') return '"%x%"';
  if (op === 'search') return '"x"';
  switch (kind) {
    case 'uuid':
      return `"${UUID}"`;
    case 'timestamp':
      return '"2024-07-15T12:34:56Z"';
    case 'latency':
      return '"5s"';
    case 'number':
    case 'feedbackScore':
      return '10';
    case 'boolean':
      return 'true';
    default:
      return '"x"';
  }
}

describe('parseFilter: every attribute with every operator it supports', () => {
  it('accepts each pair and records operator and attribute', () => {
    let count = 0;
    for (const attribute of attributeNames) {
      const spec = getAttribute(attribute);
      assert.ok(spec);
      for (const op of spec.ops) {
        const text = `${op}(${attribute}, ${sampleValue(attribute, op)})`;
        const node = comparison(text);
        assert.equal(node.op, op, text);
        assert.equal(node.attribute, attribute, text);
        assert.deepEqual([node.start, node.end], [0, text.length], text);
        // Everything that parses must also compile.
        compileFilter(node, { runAlias: 'r' });
        count++;
      }
    }
    assert.ok(count > 120, `only ${count} combinations`);
  });

  it('lists the documented attributes', () => {
    for (const name of ['id', 'name', 'run_type', 'status', 'start_time', 'end_time', 'latency', 'total_tokens', 'prompt_tokens',
      'completion_tokens', 'total_cost', 'prompt_cost', 'completion_cost', 'first_token_time', 'error', 'tags', 'metadata_key',
      'metadata_value', 'feedback_key', 'feedback_score', 'input_key', 'input_value', 'output_key', 'output_value', 'is_root',
      'trace_id', 'parent_run_id', 'reference_example_id', 'session_id', 'dotted_order', 'metadata']) {
      assert.ok(attributeNames.includes(name), name);
    }
  });
});

describe('parseFilter: values', () => {
  it('reads double- and single-quoted strings with escapes', () => {
    assert.deepEqual(comparison(`eq(name, "a\\"b'c")`).operand, { type: 'text', value: `a"b'c` });
    assert.deepEqual(comparison(`eq(name, 'a\\'b"c')`).operand, { type: 'text', value: `a'b"c` });
    assert.deepEqual(comparison(String.raw`eq(name, "\\ \/ \n\t\r\b\f \u00e9\u0041 \uD83D\uDE00")`).operand, {
      type: 'text',
      value: '\\ / \n\t\r\b\f éA 😀',
    });
    assert.deepEqual(comparison('eq(name, "")').operand, { type: 'text', value: '' });
    assert.deepEqual(comparison('eq(name, "日本語 🚀")').operand, { type: 'text', value: '日本語 🚀' });
  });

  it('reads numbers, booleans, null and lists', () => {
    assert.deepEqual(comparison('gt(total_tokens, 5000)').operand, { type: 'number', value: '5000' });
    assert.deepEqual(comparison('gte(total_cost, -0.5e-3)').operand, { type: 'number', value: '-0.5e-3' });
    // Kept as text so integers beyond 2^53 reach PostgreSQL intact.
    assert.deepEqual(comparison('eq(total_tokens, 9007199254740993)').operand, { type: 'number', value: '9007199254740993' });
    assert.deepEqual(comparison('eq(is_root, true)').operand, { type: 'boolean', value: true });
    assert.deepEqual(comparison('neq(is_root, false)').operand, { type: 'boolean', value: false });
    assert.deepEqual(comparison('neq(error, null)').operand, { type: 'null' });
    assert.deepEqual(comparison('eq(error, true)').operand, { type: 'boolean', value: true });
    assert.deepEqual(comparison('in(run_type, ["llm", \'chain\'])').operand, {
      type: 'list',
      items: [
        { type: 'text', value: 'llm' },
        { type: 'text', value: 'chain' },
      ],
    });
    assert.deepEqual(comparison('in(metadata_value, ["a", 1, true])').operand, {
      type: 'list',
      items: [
        { type: 'text', value: 'a' },
        { type: 'text', value: '1' },
        { type: 'text', value: 'true' },
      ],
    });
  });

  it('converts latency durations to exact seconds', () => {
    const cases: Array<[string, string]> = [
      ['"5s"', '5'],
      ['"2.5m"', '150'],
      ['"1.1m"', '66'],
      ['"1h"', '3600'],
      ['"1d"', '86400'],
      ['"250ms"', '0.25'],
      ['"1.5"', '1.5'],
      ['10', '10'],
      ['0.25', '0.25'],
    ];
    for (const [literal, seconds] of cases) {
      assert.deepEqual(comparison(`gt(latency, ${literal})`).operand, { type: 'number', value: seconds }, literal);
    }
  });

  it('normalizes timestamps to an explicit offset', () => {
    const cases: Array<[string, string]> = [
      ['2023-07-15T12:34:56Z', '2023-07-15T12:34:56+00:00'],
      ['2023-07-15T12:34:56.123456Z', '2023-07-15T12:34:56.123456+00:00'],
      ['2023-07-15T12:34:56', '2023-07-15T12:34:56+00:00'],
      ['2023-07-15 12:34', '2023-07-15T12:34:00+00:00'],
      ['2023-07-15', '2023-07-15T00:00:00+00:00'],
      ['2023-07-15T12:34:56+02:00', '2023-07-15T12:34:56+02:00'],
      ['2023-07-15T12:34:56-0530', '2023-07-15T12:34:56-05:30'],
      ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00+00:00'],
    ];
    for (const [input, normalized] of cases) {
      assert.deepEqual(comparison(`gt(start_time, "${input}")`).operand, { type: 'timestamp', value: normalized }, input);
    }
  });

  it('lower-cases UUIDs and canonicalizes metadata JSON', () => {
    assert.deepEqual(comparison(`eq(trace_id, "${UUID.toUpperCase()}")`).operand, { type: 'uuid', value: UUID });
    assert.deepEqual(comparison(`has(metadata, '{ "foo" : "bar" }')`).operand, { type: 'json', value: '{"foo":"bar"}' });
  });
});

describe('parseFilter: structure and positions', () => {
  it('builds nested and/or/not with source spans', () => {
    const text = `and(eq(name, "x"), or(gt(latency, "5s"), not(has(tags, 'b'))))`;
    const root = parseFilter(text);
    assert.equal(root.kind, 'and');
    assert.deepEqual([root.start, root.end], [0, text.length]);
    const [eq, or] = root.kind === 'and' ? root.args : [];
    assert.ok(eq?.kind === 'comparison' && or?.kind === 'or');
    assert.deepEqual([eq.start, eq.end, eq.attributeSpan.start, eq.attributeSpan.end], [4, 17, 7, 11]);
    assert.deepEqual([eq.value.start, eq.value.end], [13, 16]);
    assert.deepEqual([or.start, or.end], [19, text.length - 1]);
    const [gt, not] = or.args;
    assert.ok(gt?.kind === 'comparison' && not?.kind === 'not');
    assert.deepEqual([gt.start, gt.end, gt.value.start], [22, 39, 34]);
    assert.deepEqual([not.start, not.end], [41, 60]);
    assert.ok(not.arg.kind === 'comparison');
    assert.deepEqual([not.arg.start, not.arg.end, not.arg.value.start, not.arg.value.end], [45, 59, 55, 58]);
  });

  it('accepts and/or with one or many arguments, and whitespace anywhere', () => {
    const one = parseFilter('and(eq(name, "x"))');
    assert.ok(one.kind === 'and' && one.args.length === 1);
    const many = parseFilter(' or ( eq ( name , "a" ) ,\n\teq(name,"b") , eq(name, "c"),eq(name, "d") ) ');
    assert.ok(many.kind === 'or' && many.args.length === 4);
    assert.deepEqual([many.start, many.end], [1, 71]);
  });

  it('parses every documented example', () => {
    const examples = [
      'and(eq(run_type, "chain"), gt(latency, 10), gt(total_tokens, 5000))',
      'and(gt(start_time, "2023-07-15T12:34:56Z"), or(neq(error, null), and(eq(feedback_key, "Correctness"), eq(feedback_score, 0.0))))',
      'and(or(has(tags, "experimental"), has(tags, "beta")), gt(latency, 2))',
      'has(tags, "2aa1cf4")',
      'search("image classification")',
      'and(in(metadata_key, ["session_id","conversation_id","thread_id"]), eq(metadata_value, "…"))',
      `and(not(has(metadata, '{"foo": "bar"}')), exists(metadata, "tenant_id"))`,
      'and(eq(is_root, true), and(eq(feedback_key, "user_score"), eq(feedback_score, 1)))',
      'and(eq(is_root, true), eq(feedback_key, "prompt_intent"))',
      'eq(name, "RetrieveDocs")',
      'like(input_value, "%messages.content%")',
      'gt(latency, "5s")',
      'neq(metadata_key, \'k\')',
    ];
    for (const example of examples) parseFilter(example);
  });

  it('reads one-argument search as keyword search and two-argument search as a comparison', () => {
    const keywords = parseFilter('search("image  classification image")');
    assert.ok(keywords.kind === 'search');
    assert.deepEqual(keywords.terms, ['image', 'classification']);
    const scoped = comparison('search(name, "Retrieve")');
    assert.equal(scoped.op, 'search');
  });

  it('allows exactly MAX_FILTER_DEPTH nested calls', () => {
    const depth = MAX_FILTER_DEPTH - 1;
    parseFilter(`${'not('.repeat(depth)}eq(name, "x")${')'.repeat(depth)}`);
  });

  it('treats absent, empty and whitespace-only filters as blank', () => {
    assert.equal(isBlankFilter(undefined), true);
    assert.equal(isBlankFilter(null), true);
    assert.equal(isBlankFilter(''), true);
    assert.equal(isBlankFilter(' \n\t'), true);
    assert.equal(isBlankFilter('eq(name, "x")'), false);
  });
});

const deep = `${'not('.repeat(MAX_FILTER_DEPTH)}eq(name, "x")${')'.repeat(MAX_FILTER_DEPTH)}`;
const long = `eq(name, "${'a'.repeat(MAX_FILTER_LENGTH)}")`;

/** [filter, position, text the message must contain, expected (exact)?] */
const malformed: Array<[string, number, string, string?]> = [
  ['eq(nmae, "x")', 3, 'unknown attribute "nmae" (did you mean name?)'],
  ['eqq(name, "x")', 0, 'unknown function "eqq" (did you mean eq?)', 'a comparator or and/or/not: one of and, or, not, eq, neq, gt, gte, lt, lte, has, search, in, like, exists'],
  ['EQ(name, "x")', 0, 'function names are lowercase: eq'],
  ['contains(name, "x")', 0, 'unknown function "contains"'],
  ['eq(name "x")', 8, 'unexpected string "x"', "','"],
  ['eq(name, "x"', 12, 'the filter ends too early', "')'"],
  ['and(eq(name, "x"), eq(name, "y")', 32, 'the filter ends too early', "',' or ')'"],
  ['eq(name, "abc', 9, 'unterminated string', 'a closing "'],
  ["eq(name, 'abc", 9, 'unterminated string', "a closing '"],
  ['eq(name, "abc\\', 9, 'unterminated string'],
  ['eq(name, "x") foo', 14, 'unexpected word "foo" after the end of the filter', 'end of input'],
  ['eq(name, "x"), eq(name, "y")', 13, 'combine expressions with and(…) or or(…)'],
  ['eq(name)', 7, 'eq(name, …) is missing its value', "','"],
  ['eq(name, "x", "y")', 12, 'eq() takes exactly two arguments', "')'"],
  ['not(eq(name, "x"), eq(name, "y"))', 17, 'not() takes exactly one expression', "')'"],
  ['and()', 4, 'and() is empty'],
  ['or()', 3, 'or() is empty'],
  ['not()', 4, 'not() is empty; it takes exactly one expression'],
  ['eq()', 3, 'eq() takes an attribute and a value', 'an attribute name'],
  ['and(eq(name, "x"),)', 18, "unexpected ')'", 'a comparator or and/or/not'],
  ['gt(total_tokens, "abc")', 17, 'gt(total_tokens, …) cannot take the string "abc"', 'a number'],
  ['eq(feedback_score, "high")', 19, 'cannot take the string "high"', 'a number'],
  ['eq(id, "not-a-uuid")', 7, '"not-a-uuid" is not a valid UUID for id'],
  [`in(trace_id, ["${UUID}", "nope"])`, 54, '"nope" is not a valid UUID for trace_id'],
  ['eq(parent_run_id, 42)', 18, 'cannot take the number 42'],
  ['gt(start_time, "2024-13-01")', 15, 'there is no month 13'],
  ['gt(start_time, "yesterday")', 15, '"yesterday" is not a valid timestamp'],
  ['gt(start_time, "2023-02-29T00:00:00Z")', 15, 'day 29 does not exist in 2023-02'],
  ['gt(start_time, "2024-01-01T25:00:00Z")', 15, 'the time of day is out of range'],
  ['gt(start_time, "2024-01-01T10:00:00+16:00")', 15, 'the UTC offset +16:00 is out of range'],
  ['lt(end_time, 5)', 13, 'cannot take the number 5', 'an ISO 8601 timestamp string such as "2024-07-15T12:34:56Z"'],
  ['eq(start_time, null)', 15, 'start_time is never null'],
  [deep, MAX_FILTER_DEPTH * 4, `nests more than ${MAX_FILTER_DEPTH} calls deep`],
  [long, MAX_FILTER_LENGTH, `the filter is ${long.length} characters long`, `at most ${MAX_FILTER_LENGTH} characters`],
  ['', 0, 'the filter is empty'],
  ['   ', 3, 'the filter is empty'],
  ['eq(run_type, chain)', 13, 'strings must be quoted, e.g. "chain"'],
  ['gt(latency, 5s)', 12, 'durations are strings, write "5s"'],
  ['gt(latency, "5 parsecs")', 12, '"5 parsecs" is not a duration'],
  ['gt(latency, true)', 12, 'cannot take true'],
  ['has(name, "x")', 0, 'has cannot be used with name', 'one of eq, neq, in, like, search for name'],
  ['gt(tags, "x")', 0, 'gt cannot be used with tags', 'one of has, in for tags'],
  ['like(total_tokens, "5%")', 0, 'like cannot be used with total_tokens'],
  ['eq(name, "a\\qb")', 11, 'unknown escape \\q in a string'],
  ['eq(name, "\\u12")', 10, 'a \\u escape needs exactly four hexadecimal digits'],
  ['eq(name, "\\ud800")', 9, 'unpaired UTF-16 surrogate'],
  ['eq(name, "a\u0000b")', 11, 'strings cannot contain the NUL character'],
  ['eq(name, "\\u0000")', 10, 'strings cannot contain the NUL character'],
  [String.raw`like(name, "abc\\")`, 11, 'the like pattern ends with a lone backslash'],
  [String.raw`like(name, "100\%")`, 15, String.raw`for a literal % in a like pattern write \\%`],
  ['in(name, [])', 9, 'in(name, …) needs at least one value'],
  ['in(name, "x")', 9, 'cannot take the string "x"', 'a list of values such as ["a", "b"]'],
  ['in(name, ["a", ["b"]])', 15, 'lists cannot be nested'],
  ['in(name, ["a",])', 14, "unexpected ']'"],
  ['in(name, ["a" "b"])', 14, 'unexpected string "b"', "',' or ']'"],
  ['in(name, ["a", null])', 15, 'cannot take null'],
  ['eq(is_root, "yes")', 12, 'cannot take the string "yes"', 'true or false'],
  ['eq(name, null)', 9, '(name is never null)'],
  ['eq(metadata_value, [1])', 19, 'use in(metadata_value, [...]) for a list'],
  [`has(metadata, '{"foo": }')`, 14, 'is not valid JSON'],
  [`has(metadata, '["a"]')`, 14, 'has(metadata, …) needs a JSON object'],
  [`has(metadata, '{"a": "\\\\u0000"}')`, 14, 'the JSON contains a NUL character'],
  ['exists(error, "yes")', 14, 'cannot take the string "yes"', 'true or false'],
  ['exists(metadata, "")', 17, 'needs a non-empty key'],
  ['eq(name, "x") #', 14, 'unexpected character "#"'],
  ['eq(name, @)', 9, 'unexpected character "@"'],
  ['eq(name, -)', 9, 'unexpected character "-"'],
  ['eq(total_tokens, 1.2.3)', 17, 'invalid number "1.2.3"'],
  ['eq(total_tokens, 1e999)', 17, 'number "1e999" is out of range'],
  ['search("")', 7, 'search() needs some text', 'a non-empty string'],
  ['search("a", "b")', 10, 'search("text") takes one string'],
  ['search(name)', 11, 'search(name, …) is missing its value'],
  ['search(42)', 7, 'unexpected number 42', 'a string or an attribute name'],
  ['eq("name", "x")', 3, 'attribute names are written without quotes'],
  ['eq(execution_order, 1)', 3, 'execution_order is deprecated and not stored'],
  ['(eq(name, "x"))', 0, "unexpected '('", 'a comparator or and/or/not'],
  ['"just text"', 0, 'for text search write search("just text")'],
  ['eq(metadata.foo, "x")', 11, 'dotted paths are not supported', "','"],
  ['eq', 2, 'the filter ends too early', "'(' after eq"],
];

describe('parseFilter: malformed filters raise FilterError at the exact position', () => {
  for (const [text, position, fragment, expected] of malformed) {
    it(`${JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text)} → position ${position}`, () => {
      const error = parseError(text);
      assert.equal(error.position, position, error.message);
      assert.ok(error.message.includes(fragment), `message ${JSON.stringify(error.message)} lacks ${JSON.stringify(fragment)}`);
      assert.ok(error.message.startsWith(`Invalid filter at position ${position}: `), error.message);
      assert.ok(error.message.endsWith(`; expected ${error.expected}`), error.message);
      assert.ok(error.expected.length > 0);
      if (expected !== undefined) assert.equal(error.expected, expected);
    });
  }

  it('names every attribute in the unknown-attribute message', () => {
    const error = parseError('eq(nmae, "x")');
    assert.equal(error.expected, `one of ${attributeNames.join(', ')}`);
    assert.ok(error.message.startsWith('Invalid filter at position 3: unknown attribute "nmae" (did you mean name?); expected one of id, name, '));
  });

  it('rejects non-string input as a FilterError', () => {
    assert.throws(() => parseFilter(undefined as unknown as string), FilterError);
    assert.throws(() => parseFilter(42 as unknown as string), FilterError);
  });
});

describe('parseFilter: fuzzing lets only FilterError escape', () => {
  // A fixed-seed generator keeps failures reproducible.
  let seed = 0x2f6e2b1;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x80000000;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const pieces = ['and(', 'or(', 'not(', 'eq(', 'neq(', 'gt(', 'in(', 'has(', 'search(', 'like(', 'exists(', 'name', 'latency',
    'tags', 'metadata', 'metadata_key', 'feedback_score', 'start_time', 'id', ',', ')', '(', '[', ']', '"x"', "'y'", '"5s"',
    '1', '-2.5e3', 'true', 'null', ' ', '\\', '"', "'", '\u0000', '\ud800', '😀', '"2024-01-01"', `"${UUID}"`, '1e999', '{', '%'];
  const valid = [
    'and(eq(run_type, "chain"), gt(latency, "5s"), has(tags, "beta"))',
    'or(not(eq(name, \'x\')), in(metadata_key, ["a", "b"]), search("hello world"))',
    `and(eq(feedback_key, "k"), gte(feedback_score, 0.5), lt(start_time, "2024-01-01T00:00:00Z"), eq(id, "${UUID}"))`,
    `and(has(metadata, '{"a": [1, {"b": null}]}'), exists(error, false), like(input_value, "%\\u00e9%"))`,
  ];

  function assertOnlyFilterError(text: string): void {
    try {
      const node: FilterNode = parseFilter(text);
      compileFilter(node, { runAlias: 'r' });
    } catch (error) {
      if (!(error instanceof FilterError)) assert.fail(`${JSON.stringify(text)} threw ${String(error)}`);
      assert.ok(Number.isInteger(error.position) && error.position >= 0 && error.position <= text.length, `${JSON.stringify(text)}: ${error.message}`);
    }
  }

  it('random token soup', () => {
    for (let i = 0; i < 3000; i++) {
      const count = 1 + Math.floor(random() * 25);
      let text = '';
      for (let j = 0; j < count; j++) text += pick(pieces);
      assertOnlyFilterError(text);
    }
  });

  it('random characters', () => {
    for (let i = 0; i < 2000; i++) {
      const length = Math.floor(random() * 40);
      let text = '';
      for (let j = 0; j < length; j++) text += String.fromCharCode(Math.floor(random() * (random() < 0.8 ? 128 : 0x10000)));
      assertOnlyFilterError(text);
    }
  });

  it('mutated valid filters', () => {
    for (let i = 0; i < 4000; i++) {
      let text = pick(valid);
      const edits = 1 + Math.floor(random() * 4);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(random() * (text.length + 1));
        const mode = random();
        if (mode < 0.3) text = text.slice(0, at) + text.slice(at + 1 + Math.floor(random() * 5));
        else if (mode < 0.6) text = text.slice(0, at) + pick(pieces) + text.slice(at);
        else if (mode < 0.8) text = text.slice(0, at);
        else text = text.slice(0, at) + text.slice(Math.floor(random() * text.length));
      }
      assertOnlyFilterError(text);
    }
  });

  it('pathological nesting and length stay FilterErrors', () => {
    assertOnlyFilterError('and('.repeat(5000));
    assertOnlyFilterError(`${'not('.repeat(2400)}eq(name, "x")${')'.repeat(2400)}`);
    assertOnlyFilterError(`in(name, [${'"a",'.repeat(2400)}"a"])`);
    assertOnlyFilterError(`has(metadata, '${'['.repeat(3000)}')`);
    assertOnlyFilterError(`has(metadata, '{"a":${'['.repeat(100)}${']'.repeat(100)}}')`);
  });
});
