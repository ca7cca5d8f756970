// Unit tests of the ingest building blocks: times, the multipart reader, run operations and usage.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dottedTime, normalizeTime, toDottedStamp } from '../../../src/modules/tracing/ingest/times.ts';
import { multipartBoundary, MultipartError, parseMultipart } from '../../../src/modules/tracing/ingest/multipart.ts';
import { buildRunOp, parseDottedOrder } from '../../../src/modules/tracing/ingest/run-op.ts';
import { extractUsage, firstTokenTime } from '../../../src/modules/tracing/ingest/usage.ts';
import { formToOps } from '../../../src/modules/tracing/ingest/form-ops.ts';
import { pgSafeJson } from '../../../src/modules/tracing/runs-repo.ts';

const ROOT = '0e01bf50-474d-4536-810f-67d3ee7ea3e7';
const CHILD = 'a1b2c3d4-0000-4000-8000-000000000001';
const ROOT_ORDER = `20240919T171648521001Z${ROOT}`;
const CHILD_ORDER = `${ROOT_ORDER}.20240919T171648530002Z${CHILD}`;

describe('normalizeTime', () => {
  const cases: [unknown, string | undefined][] = [
    ['2024-09-19T17:16:48.521001Z', '2024-09-19T17:16:48.521001+00:00'],
    ['2024-09-19T17:16:48.521Z', '2024-09-19T17:16:48.521000+00:00'],
    ['2024-09-19T17:16:48.521691', '2024-09-19T17:16:48.521691+00:00'],
    ['2024-09-19T19:16:48.5+02:00', '2024-09-19T17:16:48.500000+00:00'],
    ['2024-09-19 17:16:48+0000', '2024-09-19T17:16:48.000000+00:00'],
    ['2024-02-29T23:59:59.999999Z', '2024-02-29T23:59:59.999999+00:00'],
    ['2024-12-31T23:59:59.1234567Z', '2024-12-31T23:59:59.123456+00:00'],
    [1726766208521, '2024-09-19T17:16:48.521000+00:00'],
    [1726766208521.5, '2024-09-19T17:16:48.521500+00:00'],
    ['2023-02-29T00:00:00Z', undefined],
    ['2024-02-31T00:00:00.000Z', undefined],
    ['2024-13-01T00:00:00.000Z', undefined],
    ['2024-01-01T24:00:00.000Z', undefined],
    ['yesterday', undefined],
    [-1, undefined],
    [Number.NaN, undefined],
    [null, undefined],
    [{}, undefined],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} → ${expected}`, () => assert.equal(normalizeTime(input), expected));
  }
  it('dotted_order stamps round-trip', () => {
    assert.equal(dottedTime('20240919T171648521691'), '2024-09-19T17:16:48.521691+00:00');
    assert.equal(toDottedStamp('2024-09-19T17:16:48.521001+00:00'), '20240919T171648521001');
    assert.equal(dottedTime('20240919T17164852169'), undefined);
  });
});

describe('parseMultipart', () => {
  const body = (text: string) => Buffer.from(text.replace(/\n/g, '\r\n'));
  it('reads parts with names, content types and binary data', () => {
    const raw = Buffer.concat([
      body('preamble\n--b\nContent-Disposition: form-data; name="post.x"\nContent-Type: application/json; length=2\n\n{}\n--b\ncontent-disposition: form-data; name="attachment.x.img"; filename="a.png"\nContent-Type: image/png\n\n'),
      Buffer.from([0, 13, 10, 255]),
      body('\n--b--\n'),
    ]);
    const parts = parseMultipart(raw, 'b');
    assert.deepEqual(parts.map((part) => [part.name, part.contentType]), [['post.x', 'application/json; length=2'], ['attachment.x.img', 'image/png']]);
    assert.equal(parts[0]!.data.toString(), '{}');
    assert.deepEqual([...parts[1]!.data], [0, 13, 10, 255]);
  });
  it('rejects malformed bodies', () => {
    for (const text of ['no boundary here', '--b\nContent-Disposition: form-data; name="a"\n\n{}', '--b\nContent-Disposition: form-data\n\n{}\n--b--', '--bX']) {
      assert.throws(() => parseMultipart(body(text), 'b'), MultipartError, text);
    }
  });
  it('finds the boundary parameter', () => {
    assert.equal(multipartBoundary('multipart/form-data; boundary=----LangSmithFormBoundaryk3j2'), '----LangSmithFormBoundaryk3j2');
    assert.equal(multipartBoundary('multipart/form-data; boundary="quoted b"'), 'quoted b');
    assert.equal(multipartBoundary('application/json; boundary=x'), undefined);
    assert.equal(multipartBoundary('multipart/form-data'), undefined);
  });
});

describe('buildRunOp', () => {
  it('derives lineage from dotted_order', () => {
    const { op, issues } = buildRunOp('post', { id: CHILD, name: 'c', run_type: 'llm', dotted_order: CHILD_ORDER, session_name: 'p' }, ['body']);
    assert.deepEqual(issues, []);
    assert.equal(op!.values.trace_id, ROOT);
    assert.equal(op!.values.parent_run_id, ROOT);
    assert.deepEqual(op!.values.parent_run_ids, [ROOT]);
    assert.equal(op!.values.start_time, '2024-09-19T17:16:48.530002+00:00');
    assert.equal(op!.sessionName, 'p');
  });
  it('builds a root dotted_order from start_time', () => {
    const { op } = buildRunOp('post', { id: ROOT, name: 'r', run_type: 'chain', start_time: '2024-09-19T17:16:48.521001Z' }, ['body']);
    assert.equal(op!.values.dotted_order, ROOT_ORDER);
    assert.equal(op!.values.trace_id, ROOT);
    assert.equal(op!.values.parent_run_id, null);
  });
  it('names every bad field', () => {
    const { op, issues } = buildRunOp('post', { id: CHILD, start_time: 'x', end_time: 5e20, trace_id: 'nope', dotted_order: CHILD_ORDER, inputs: [1], tags: [1], events: {} }, ['body', 'post', 0]);
    assert.equal(op, undefined);
    assert.deepEqual(issues.map((issue) => issue.loc.at(-1)).sort(), ['end_time', 'events', 'inputs', 'name', 'run_type', 'start_time', 'tags', 'trace_id'].sort());
    assert.ok(issues.every((issue) => issue.loc[0] === 'body' && issue.loc[1] === 'post' && issue.loc[2] === 0));
  });
  it('checks trace_id and parent_run_id against dotted_order', () => {
    const wrongTrace = buildRunOp('post', { id: CHILD, name: 'c', run_type: 'llm', dotted_order: CHILD_ORDER, trace_id: CHILD }, ['body']);
    assert.match(wrongTrace.issues[0]!.msg, /first dotted_order segment/);
    const wrongParent = buildRunOp('post', { id: CHILD, name: 'c', run_type: 'llm', dotted_order: CHILD_ORDER, parent_run_id: CHILD }, ['body']);
    assert.match(wrongParent.issues[0]!.msg, /penultimate/);
    const rootWithParent = buildRunOp('post', { id: ROOT, name: 'r', run_type: 'llm', dotted_order: ROOT_ORDER, parent_run_id: CHILD }, ['body']);
    assert.match(rootWithParent.issues[0]!.msg, /root/);
    assert.equal(parseDottedOrder(`${ROOT_ORDER}.`), undefined);
    assert.equal(parseDottedOrder('20240919T171648521001Znot-a-uuid-at-all-0000-000000000000'), undefined);
  });
  it('lets a patch omit what a post requires', () => {
    const { op, issues } = buildRunOp('patch', { end_time: 1726766209000 }, ['body'], ROOT);
    assert.deepEqual(issues, []);
    assert.equal(op!.values.end_time, '2024-09-19T17:16:49.000000+00:00');
  });
});

describe('usage', () => {
  it('reads usage_metadata of LLM runs from outputs or metadata', () => {
    assert.deepEqual(extractUsage({ id: ROOT, run_type: 'llm', outputs: { usage_metadata: { input_tokens: 3, output_tokens: 4 } } }), { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    assert.deepEqual(extractUsage({ id: ROOT, run_type: 'llm', extra: { metadata: { usage_metadata: { total_tokens: 9, input_cost: '0.5', output_cost: 0.25 } } } }), { total_tokens: 9, prompt_cost: 0.5, completion_cost: 0.25, total_cost: 0.75 });
    assert.deepEqual(extractUsage({ id: ROOT, run_type: 'llm', outputs: { llm_output: { token_usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } } } }), { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
    assert.deepEqual(extractUsage({ id: ROOT, run_type: 'chain', outputs: { usage_metadata: { total_tokens: 5 } } }), {});
    assert.deepEqual(extractUsage({ id: ROOT, run_type: 'llm', outputs: { usage_metadata: { total_tokens: -5, input_tokens: 'x' } } }), {});
  });
  it('first_token_time is the earliest new_token event', () => {
    assert.equal(firstTokenTime([{ name: 'start', time: '2024-01-01T00:00:00Z' }, { name: 'new_token', time: '2024-01-01T00:00:02Z' }, { name: 'new_token', time: '2024-01-01T00:00:01Z' }]), '2024-01-01T00:00:01.000000+00:00');
    assert.equal(firstTokenTime(undefined), undefined);
  });
});

describe('formToOps', () => {
  const part = (name: string, value: unknown) => ({ name, contentType: 'application/json', data: Buffer.from(JSON.stringify(value)) });
  it('joins side parts to their run and reports stray ones', () => {
    const { ops, issues } = formToOps([
      part(`post.${ROOT}`, { name: 'r', run_type: 'chain', dotted_order: ROOT_ORDER }),
      part(`post.${ROOT}.inputs`, { q: 1 }),
      part(`patch.${CHILD}.outputs`, { a: 1 }),
      { name: `attachment.${ROOT}.file`, contentType: 'text/plain; length=2', data: Buffer.from('hi') },
    ]);
    assert.equal(ops.length, 1);
    assert.deepEqual(ops[0]!.values.inputs, { q: 1 });
    assert.deepEqual(ops[0]!.attachments, [{ name: 'file', mimeType: 'text/plain', content: Buffer.from('hi') }]);
    assert.deepEqual(issues.map((issue) => issue.loc), [['body', `patch.${CHILD}`]]);
  });
  it('rejects an id in the JSON that differs from the part name', () => {
    const { ops, issues } = formToOps([part(`post.${ROOT}`, { id: CHILD, name: 'r', run_type: 'chain', dotted_order: ROOT_ORDER })]);
    assert.equal(ops.length, 0);
    assert.match(issues[0]!.msg, /must match/);
  });
});

describe('pgSafeJson', () => {
  it('replaces NUL and unpaired surrogates but keeps pairs and escaped backslashes', () => {
    const text = JSON.stringify({ a: 'x\u0000y', b: '\ud800', c: '😀', d: '\\u0000', e: '\udc00z' });
    assert.deepEqual(JSON.parse(pgSafeJson(text)), { a: 'x\ufffdy', b: '\ufffd', c: '😀', d: '\\u0000', e: '\ufffdz' });
    assert.equal(pgSafeJson('{"plain": 1}'), '{"plain": 1}');
  });
});

describe('multipart fuzzing', () => {
  it('mutated SDK bodies either parse or raise MultipartError, and their parts never crash formToOps', () => {
    const valid = Buffer.from([
      '--b', `Content-Disposition: form-data; name="post.${ROOT}"`, 'Content-Type: application/json; length=2', '', `{"name":"r","run_type":"chain","dotted_order":"${ROOT_ORDER}"}`,
      '--b', `Content-Disposition: form-data; name="post.${ROOT}.inputs"`, '', '{"q":1}',
      '--b', `Content-Disposition: form-data; name="attachment.${ROOT}.f"`, 'Content-Type: text/plain', '', 'hello',
      '--b--', '',
    ].join('\r\n'));
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let i = 0; i < 2000; i++) {
      const mutated = Buffer.from(valid);
      const edits = 1 + Math.floor(random() * 4);
      for (let e = 0; e < edits; e++) mutated[Math.floor(random() * mutated.length)] = Math.floor(random() * 256);
      const body = random() < 0.2 ? mutated.subarray(0, Math.floor(random() * mutated.length)) : mutated;
      try {
        const parts = parseMultipart(body, 'b');
        const { ops, issues } = formToOps(parts);
        assert.ok(Array.isArray(ops) && Array.isArray(issues));
      } catch (error) {
        assert.ok(error instanceof MultipartError, `iteration ${i}: ${String(error)}`);
      }
    }
  });
});
