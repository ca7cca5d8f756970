// Ingestion over HTTP as the SDK sends it: multipart parts, gzip, batch and single-run endpoints, merge of
// post and patch in any order and across requests, idempotent replays, lineage checks, partial rejects,
// size limits, auth and tenant isolation.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { brotliCompressSync, deflateSync, gzipSync, zstdCompressSync } from 'node:zlib';
import { startTestBerth, type TestBerth } from '../helpers/berth.ts';

let berth: TestBerth;
const MAX_BODY = 3 * 1024 * 1024;

before(async () => {
  berth = await startTestBerth({ env: { BERTH_TRACE_MAX_BODY_BYTES: String(MAX_BODY) } });
});
after(async () => berth.close());

type Part = { name: string; body: unknown; type?: string };

function multipart(parts: Part[]): { body: Buffer; contentType: string } {
  const boundary = `----LangSmithFormBoundary${Math.random().toString(36).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const data = Buffer.isBuffer(part.body) ? part.body : Buffer.from(JSON.stringify(part.body));
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\nContent-Type: ${part.type ?? 'application/json'}; length=${data.length}\r\n\r\n`), data, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

async function post(path: string, body: Buffer, headers: Record<string, string>, key: string | null = berth.apiKey): Promise<{ status: number; body: any }> {
  const response = await fetch(`${berth.url}${path}`, { method: 'POST', body, headers: { ...(key ? { 'x-api-key': key } : {}), ...headers } });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function sendParts(parts: Part[], options: { gzip?: boolean; path?: string; key?: string | null } = {}) {
  const { body, contentType } = multipart(parts);
  const headers: Record<string, string> = { 'content-type': contentType };
  if (options.gzip) headers['content-encoding'] = 'gzip';
  return post(options.path ?? '/runs/multipart', options.gzip ? gzipSync(body) : body, headers, options.key);
}

function stamp(iso: string): string {
  return iso.replace(/[-:]/g, '').replace('.', '').replace('Z', '').slice(0, 21);
}

/** A root run and its child, as the SDK would describe them. */
function tree(project: string) {
  const rootId = randomUUID();
  const childId = randomUUID();
  const rootStart = '2026-03-01T10:00:00.000001Z';
  const childStart = '2026-03-01T10:00:00.100002Z';
  const rootOrder = `${stamp(rootStart)}Z${rootId}`;
  const childOrder = `${rootOrder}.${stamp(childStart)}Z${childId}`;
  return {
    rootId, childId, rootOrder, childOrder,
    rootPost: { id: rootId, name: 'root', run_type: 'chain', start_time: rootStart, trace_id: rootId, dotted_order: rootOrder, session_name: project },
    childPost: { id: childId, name: 'child', run_type: 'llm', start_time: childStart, trace_id: rootId, dotted_order: childOrder, parent_run_id: rootId, session_name: project },
    rootPatch: { id: rootId, trace_id: rootId, dotted_order: rootOrder, end_time: '2026-03-01T10:00:01.5Z', session_name: project },
    childPatch: { id: childId, trace_id: rootId, dotted_order: childOrder, parent_run_id: rootId, end_time: Date.parse('2026-03-01T10:00:00.900Z'), session_name: project },
  };
}

async function readRun(id: string): Promise<any> {
  const response = await berth.api('GET', `/runs/${id}`);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body;
}

async function projectRuns(project: string): Promise<any[]> {
  const sessions = await berth.api('GET', `/sessions?name=${encodeURIComponent(project)}`);
  if (sessions.body.length === 0) return [];
  const page = await berth.api('POST', '/runs/query', { body: { session: [sessions.body[0].id], order: 'asc' } });
  return page.body.runs;
}

test('/info advertises multipart, gzip and the enforced size limit, and needs the API key', async () => {
  const info = await berth.api('GET', '/info');
  assert.equal(info.status, 200);
  assert.equal(info.body.batch_ingest_config.use_multipart_endpoint, true);
  assert.equal(info.body.batch_ingest_config.size_limit_bytes, MAX_BODY - 1024 * 1024);
  assert.equal(info.body.instance_flags.gzip_body_enabled, true);
  assert.equal(typeof info.body.version, 'string');
  const v1 = await berth.api('GET', '/api/v1/info');
  assert.deepEqual(v1.body, info.body);
  const anonymous = await berth.api('GET', '/info', { key: null });
  assert.equal(anonymous.status, 401);
  const openapi = await berth.api('GET', '/openapi.json', { key: null });
  assert.equal(openapi.status, 200);
  for (const path of ['/info', '/runs/multipart', '/runs/batch', '/runs', '/runs/{run_id}', '/runs/query', '/sessions', '/sessions/{session_id}', '/feedback']) {
    assert.ok(openapi.body.paths[path], path);
  }
});

test('multipart parts of one request become one run per id with side fields and attachments', async () => {
  const t = tree('mp-basic');
  const response = await sendParts([
    { name: `post.${t.rootId}`, body: t.rootPost },
    { name: `post.${t.rootId}.inputs`, body: { question: 'hi ünïcode' } },
    { name: `post.${t.rootId}.extra`, body: { metadata: { user: 'u1' }, runtime: { sdk: 'js' } } },
    { name: `post.${t.childId}`, body: t.childPost },
    { name: `post.${t.childId}.inputs`, body: { prompt: 'p' } },
    { name: `post.${t.childId}.serialized`, body: { kind: 'model' } },
    { name: `patch.${t.childId}`, body: t.childPatch },
    { name: `patch.${t.childId}.outputs`, body: { text: 'o', usage_metadata: { input_tokens: 3, output_tokens: 4, total_tokens: 7 } } },
    { name: `patch.${t.childId}.events`, body: [{ name: 'new_token', time: '2026-03-01T10:00:00.300Z' }, { name: 'new_token', time: '2026-03-01T10:00:00.200Z' }] },
    { name: `attachment.${t.childId}.image`, body: Buffer.from([1, 2, 3, 250]), type: 'image/png' },
  ]);
  assert.equal(response.status, 202, JSON.stringify(response.body));
  const root = await readRun(t.rootId);
  assert.equal(root.name, 'root');
  assert.equal(root.status, 'pending');
  assert.deepEqual(root.inputs, { question: 'hi ünïcode' });
  assert.deepEqual(root.extra, { metadata: { user: 'u1' }, runtime: { sdk: 'js' } });
  assert.equal(root.start_time, '2026-03-01T10:00:00.000001+00:00');
  const child = await readRun(t.childId);
  assert.equal(child.parent_run_id, t.rootId);
  assert.deepEqual(child.parent_run_ids, [t.rootId]);
  assert.equal(child.status, 'success');
  assert.equal(child.end_time, '2026-03-01T10:00:00.900000+00:00');
  assert.deepEqual(child.serialized, { kind: 'model' });
  assert.equal(child.total_tokens, 7);
  assert.equal(child.prompt_tokens, 3);
  assert.equal(child.first_token_time, '2026-03-01T10:00:00.200000+00:00');
  assert.deepEqual(child.attachments, { image: { mime_type: 'image/png', size: 4 } });
  const file = await fetch(`${berth.url}/runs/${t.childId}/attachments/image`, { headers: { 'x-api-key': berth.apiKey } });
  assert.equal(file.headers.get('content-type'), 'image/png');
  assert.deepEqual([...new Uint8Array(await file.arrayBuffer())], [1, 2, 3, 250]);
});

test('gzip bodies, /api/v1 paths and the batch endpoint ingest the same way', async () => {
  const t = tree('mp-gzip');
  const gz = await sendParts([{ name: `post.${t.rootId}`, body: { ...t.rootPost, inputs: { a: 1 } } }], { gzip: true, path: '/api/v1/runs/multipart' });
  assert.equal(gz.status, 202, JSON.stringify(gz.body));
  assert.deepEqual((await readRun(t.rootId)).inputs, { a: 1 });
  // zstd is what the Python SDK sends when /info sets zstd_compression_enabled; deflate and br for other clients.
  const encoders: [string, (data: Buffer) => Buffer][] = [['zstd', zstdCompressSync], ['deflate', deflateSync], ['br', brotliCompressSync]];
  for (const [encoding, encode] of encoders) {
    const id = randomUUID();
    const { body, contentType } = multipart([{ name: `post.${id}`, body: { id, name: encoding, run_type: 'chain', start_time: '2026-03-01T10:00:00Z', session_name: 'mp-gzip' } }]);
    const response = await post('/runs/multipart', encode(body), { 'content-type': contentType, 'content-encoding': encoding });
    assert.equal(response.status, 202, `${encoding}: ${JSON.stringify(response.body)}`);
    assert.equal((await readRun(id)).name, encoding);
  }
  const unknownEncoding = await post('/runs/multipart', Buffer.from('x'), { 'content-type': 'multipart/form-data; boundary=x', 'content-encoding': 'lzma' });
  assert.equal(unknownEncoding.status, 400);
  assert.match(unknownEncoding.body.detail, /Unsupported Content-Encoding/);
  const batch = await berth.api('POST', '/runs/batch', { body: { post: [{ ...t.childPost, inputs: { b: 2 } }], patch: [{ ...t.rootPatch, outputs: { done: true } }] } });
  assert.equal(batch.status, 202, JSON.stringify(batch.body));
  const root = await readRun(t.rootId);
  assert.deepEqual(root.outputs, { done: true });
  assert.deepEqual(root.inputs, { a: 1 });
  assert.equal(root.status, 'success');
  assert.equal((await readRun(t.childId)).name, 'child');
});

test('a patch that arrives before its post is merged: the post does not undo the end of the run', async () => {
  const t = tree('out-of-order');
  const patch = await sendParts([
    { name: `patch.${t.rootId}`, body: { ...t.rootPatch, extra: { metadata: { final: true } } } },
    { name: `patch.${t.rootId}.outputs`, body: { answer: 42 } },
    { name: `patch.${t.rootId}.error`, body: 'boom' },
  ]);
  assert.equal(patch.status, 202, JSON.stringify(patch.body));
  const early = await readRun(t.rootId);
  assert.equal(early.status, 'error');
  const postResponse = await sendParts([
    { name: `post.${t.rootId}`, body: t.rootPost },
    { name: `post.${t.rootId}.inputs`, body: { q: 1 } },
    { name: `post.${t.rootId}.extra`, body: { metadata: { final: false, first: 1 } } },
  ]);
  assert.equal(postResponse.status, 202);
  const run = await readRun(t.rootId);
  assert.equal(run.name, 'root');
  assert.equal(run.run_type, 'chain');
  assert.deepEqual(run.inputs, { q: 1 });
  assert.deepEqual(run.outputs, { answer: 42 });
  assert.equal(run.error, 'boom');
  assert.equal(run.status, 'error');
  assert.equal(run.end_time, '2026-03-01T10:00:01.500000+00:00');
  assert.deepEqual(run.extra, { metadata: { final: true } });
});

test('re-sending the same batch creates no duplicates and changes nothing', async () => {
  const t = tree('replay');
  const parts: Part[] = [
    { name: `post.${t.rootId}`, body: t.rootPost },
    { name: `post.${t.childId}`, body: t.childPost },
    { name: `patch.${t.childId}`, body: t.childPatch },
    { name: `patch.${t.childId}.outputs`, body: { x: 1 } },
  ];
  for (let i = 0; i < 3; i++) assert.equal((await sendParts(parts)).status, 202);
  const runs = await projectRuns('replay');
  assert.equal(runs.length, 2);
  assert.deepEqual((await readRun(t.childId)).outputs, { x: 1 });
  const sessions = await berth.api('GET', '/sessions?name=replay');
  assert.equal(sessions.body[0].run_count, 2);
  assert.equal(sessions.body[0].last_run_start_time, '2026-03-01T10:00:00.100002+00:00');
});

test('good runs of a batch are kept and the bad ones answered 422 by name', async () => {
  const t = tree('partial');
  const badId = randomUUID();
  const response = await sendParts([
    { name: `post.${t.rootId}`, body: t.rootPost },
    { name: `post.${badId}`, body: { id: badId, name: 'bad', run_type: 'chain', start_time: 'yesterday', trace_id: badId, dotted_order: `20260301T100000000001Z${badId}` } },
    { name: `post.${t.childId}`, body: { ...t.childPost, trace_id: randomUUID() } },
  ]);
  assert.equal(response.status, 422);
  assert.deepEqual(response.body.detail.map((issue: any) => issue.loc), [
    ['body', `post.${badId}`, 'start_time'],
    ['body', `post.${t.childId}`, 'trace_id'],
  ]);
  assert.match(response.body.detail[0].msg, /ISO 8601/);
  assert.match(response.body.detail[1].msg, /first dotted_order segment/);
  assert.deepEqual((await projectRuns('partial')).map((run) => run.id), [t.rootId]);
  const missing = await berth.api('GET', `/runs/${badId}`);
  assert.equal(missing.status, 404);
});

test('lineage is checked against dotted_order and derived when absent', async () => {
  const t = tree('lineage');
  const wrongParent = await berth.api('POST', '/runs', { body: { ...t.childPost, parent_run_id: randomUUID() } });
  assert.equal(wrongParent.status, 422);
  assert.deepEqual(wrongParent.body.detail[0].loc, ['body', 'parent_run_id']);
  const notOwn = await berth.api('POST', '/runs', { body: { ...t.rootPost, dotted_order: t.childOrder } });
  assert.equal(notOwn.status, 422);
  assert.match(notOwn.body.detail[0].msg, /end with the run's own id/);
  const malformed = await berth.api('POST', '/runs', { body: { ...t.rootPost, dotted_order: 'garbage' } });
  assert.equal(malformed.status, 422);
  // Unbatched mode: no dotted_order; the server derives it from start_time and the stored parent.
  const { dotted_order: _a, trace_id: _b, ...bareRoot } = t.rootPost;
  const { dotted_order: _c, trace_id: _d, ...bareChild } = t.childPost;
  assert.equal((await berth.api('POST', '/runs', { body: bareRoot })).status, 202);
  assert.equal((await berth.api('POST', '/runs', { body: { ...bareChild, start_time: Date.parse('2026-03-01T10:00:00.100Z') } })).status, 202);
  const child = await readRun(t.childId);
  assert.equal(child.trace_id, t.rootId);
  assert.equal(child.dotted_order, `${t.rootOrder}.20260301T100000100000Z${t.childId}`);
  const patched = await berth.api('PATCH', `/runs/${t.childId}`, { body: { end_time: '2026-03-01T10:00:02Z', outputs: { y: 2 } } });
  assert.equal(patched.status, 202, JSON.stringify(patched.body));
  assert.deepEqual((await readRun(t.childId)).outputs, { y: 2 });
  const orphanId = randomUUID();
  const orphan = await berth.api('POST', '/runs', { body: { id: orphanId, name: 'o', run_type: 'chain', start_time: '2026-03-01T10:00:00Z', parent_run_id: randomUUID(), session_name: 'lineage' } });
  assert.equal(orphan.status, 422);
  assert.match(orphan.body.detail[0].msg, /Parent run .* is not stored/);
  const unknownPatch = await berth.api('PATCH', `/runs/${randomUUID()}`, { body: { end_time: '2026-03-01T10:00:02Z' } });
  assert.equal(unknownPatch.status, 422);
});

test('bad bodies get clear 4xx answers', async () => {
  const id = randomUUID();
  const cases: [Part[] | Buffer, RegExp | number][] = [
    [[{ name: `post.${id}`, body: Buffer.from('{"id": ') }], 422],
    [[{ name: `post.${id}.inputs`, body: { a: 1 } }], 422],
    [[{ name: 'hello', body: {} }], 422],
    [[{ name: `post.${id}.nope`, body: {} }], 422],
    [[{ name: `post.${id}`, body: [1, 2] }], 422],
    [Buffer.from('not multipart at all'), 400],
  ];
  for (const [parts, expected] of cases) {
    const response = Buffer.isBuffer(parts)
      ? await post('/runs/multipart', parts, { 'content-type': 'multipart/form-data; boundary=xyz' })
      : await sendParts(parts);
    assert.equal(response.status, expected, JSON.stringify(response.body));
    assert.ok(response.body.detail, JSON.stringify(response.body));
  }
  const noBoundary = await post('/runs/multipart', Buffer.from('x'), { 'content-type': 'multipart/form-data' });
  assert.equal(noBoundary.status, 400);
  const badGzip = await post('/runs/multipart', Buffer.from('not gzip'), { 'content-type': 'multipart/form-data; boundary=x', 'content-encoding': 'gzip' });
  assert.equal(badGzip.status, 400);
  assert.match(badGzip.body.detail, /could not be decoded as gzip/);
  const badJson = await post('/runs/batch', Buffer.from('{"post": ['), { 'content-type': 'application/json' });
  assert.equal(badJson.status, 422);
  assert.equal(badJson.body.detail[0].type, 'json_invalid');
  const missingName = await berth.api('POST', '/runs/batch', { body: { post: [{ id, run_type: 'chain', start_time: '2026-01-01T00:00:00Z' }] } });
  assert.equal(missingName.status, 422);
  assert.deepEqual(missingName.body.detail[0].loc, ['body', 'post', 0, 'name']);
});

test('bodies over the limit are answered 413, compressed or not', async () => {
  const id = randomUUID();
  const big = { blob: 'x'.repeat(MAX_BODY + 10) };
  const plain = await sendParts([{ name: `post.${id}`, body: { id, name: 'big', run_type: 'chain', start_time: '2026-01-01T00:00:00Z' } }, { name: `post.${id}.inputs`, body: big }]);
  assert.equal(plain.status, 413);
  assert.match(plain.body.detail, /larger than the limit/);
  const zipped = await sendParts([{ name: `post.${id}`, body: { id, name: 'big', run_type: 'chain', start_time: '2026-01-01T00:00:00Z' } }, { name: `post.${id}.inputs`, body: big }], { gzip: true });
  assert.equal(zipped.status, 413);
  const json = await berth.api('POST', '/runs/batch', { body: { post: [{ id, name: 'big', run_type: 'chain', start_time: '2026-01-01T00:00:00Z', inputs: big }] } });
  assert.equal(json.status, 413);
  assert.equal((await berth.api('GET', `/runs/${id}`)).status, 404);
});

test('NUL characters and lone surrogates do not break a batch', async () => {
  const t = tree('unicode');
  const response = await berth.api('POST', '/runs', { body: { ...t.rootPost, inputs: { nul: 'a\u0000b', lone: 'x\ud800y', pair: '😀', escaped: '\\u0000' }, error: 'bad\u0000' } });
  assert.equal(response.status, 202, JSON.stringify(response.body));
  const run = await readRun(t.rootId);
  assert.deepEqual(run.inputs, { nul: 'a\ufffdb', lone: 'x\ufffdy', pair: '😀', escaped: '\\u0000' });
  assert.equal(run.error, 'bad\ufffd');
});

test('authentication on every route, and workspaces are isolated', async () => {
  const t = tree('isolated');
  assert.equal((await sendParts([{ name: `post.${t.rootId}`, body: t.rootPost }], { key: null })).status, 401);
  assert.equal((await sendParts([{ name: `post.${t.rootId}`, body: t.rootPost }], { key: 'wrong' })).status, 401);
  assert.equal((await berth.api('POST', '/runs/query', { body: {}, key: null })).status, 401);
  assert.equal((await sendParts([{ name: `post.${t.rootId}`, body: t.rootPost }])).status, 202);
  const created = await berth.api('POST', '/api/v1/workspaces', { body: { name: 'other' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const memberKey = await berth.api('POST', '/api/v1/api-keys', { body: { workspace_id: created.body.id, description: 'member' } });
  const key = memberKey.body.key as string;
  assert.equal((await berth.api('GET', `/runs/${t.rootId}`, { key })).status, 404);
  const sessions = await berth.api('GET', '/sessions?name=isolated', { key });
  const own = await berth.api('GET', '/sessions?name=isolated');
  assert.equal(own.body.length, 1);
  assert.equal((await berth.api('GET', `/sessions/${own.body[0].id}`, { key })).status, 404);
  assert.equal((await berth.api('DELETE', `/sessions/${own.body[0].id}`, { key })).status, 404);
  const query = await berth.api('POST', '/runs/query', { body: { session: [own.body[0].id] }, key });
  assert.deepEqual(query.body.runs, []);
  // The same run id in another workspace is another run.
  assert.equal((await sendParts([{ name: `post.${t.rootId}`, body: { ...t.rootPost, name: 'theirs' } }], { key })).status, 202);
  assert.equal((await readRun(t.rootId)).name, 'root');
  assert.deepEqual(sessions.body, []);
});

test('concurrent requests carrying posts and patches of the same runs merge without loss', async () => {
  const runs = Array.from({ length: 40 }, () => tree('concurrent'));
  const requests: Part[][] = [];
  for (let i = 0; i < 8; i++) {
    const slice = runs.slice(i * 5, i * 5 + 5);
    // Each request posts its own five traces and patches the previous request's: both orders happen.
    const previous = runs.slice(((i + 7) % 8) * 5, ((i + 7) % 8) * 5 + 5);
    requests.push([
      ...slice.flatMap((t) => [{ name: `post.${t.rootId}`, body: t.rootPost }, { name: `post.${t.childId}`, body: t.childPost }]),
      ...previous.flatMap((t) => [{ name: `patch.${t.rootId}`, body: t.rootPatch }, { name: `patch.${t.childId}`, body: t.childPatch }, { name: `patch.${t.childId}.outputs`, body: { done: t.childId } }]),
    ]);
  }
  const responses = await Promise.all(requests.map((parts) => sendParts(parts)));
  assert.deepEqual(responses.map((response) => response.status), Array(8).fill(202));
  const stored = await projectRuns('concurrent');
  assert.equal(stored.length, 80);
  for (const run of stored) {
    assert.equal(run.status, 'success', run.name);
    assert.notEqual(run.name, '');
    if (run.name === 'child') assert.deepEqual(run.outputs, { done: run.id });
  }
});

test('a project deleted behind the cache (another process) is created again on the next ingest', async () => {
  const first = tree('recreated');
  assert.equal((await sendParts([{ name: `post.${first.rootId}`, body: first.rootPost }])).status, 202);
  const before = await berth.api('GET', '/sessions?name=recreated');
  // As another Berth process would: straight in the database, so this process's project cache is stale.
  await berth.berth.db.query('DELETE FROM tracer_sessions WHERE id = $1', [before.body[0].id]);
  const second = tree('recreated');
  const response = await sendParts([{ name: `post.${second.rootId}`, body: second.rootPost }]);
  assert.equal(response.status, 202, JSON.stringify(response.body));
  const after = await berth.api('GET', '/sessions?name=recreated');
  assert.notEqual(after.body[0].id, before.body[0].id);
  assert.deepEqual((await projectRuns('recreated')).map((run) => run.id), [second.rootId]);
});
