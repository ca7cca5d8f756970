// End to end with the official langsmith SDK: a nested pipeline traced with `traceable` lands in Berth
// unchanged (names, parents, dotted_order, inputs/outputs, tokens), and feedback shows up on the runs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from 'langsmith';
import { traceable } from 'langsmith/traceable';
import { eventually, startTestBerth, type TestBerth } from '../helpers/berth.ts';

let berth: TestBerth;

before(async () => {
  berth = await startTestBerth();
});
after(async () => berth.close());

async function runsOf(project: string): Promise<any[]> {
  const sessions = await berth.api('GET', `/sessions?name=${encodeURIComponent(project)}`);
  assert.equal(sessions.status, 200);
  assert.equal(sessions.body.length, 1);
  const page = await berth.api('POST', '/runs/query', { body: { session: [sessions.body[0].id], order: 'asc', limit: 100 } });
  assert.equal(page.status, 200, JSON.stringify(page.body));
  return page.body.runs;
}

test('a nested traceable pipeline is stored with its tree, payloads, tokens and feedback', async () => {
  const client = new Client({ apiUrl: berth.url, apiKey: berth.apiKey, autoBatchTracing: true });
  const project = 'sdk-e2e';
  const llm = traceable(async (prompt: string) => ({
    answer: `echo: ${prompt}`,
    usage_metadata: { input_tokens: 7, output_tokens: 5, total_tokens: 12, input_cost: 0.0007, output_cost: 0.001, total_cost: 0.0017 },
  }), { name: 'fake-llm', run_type: 'llm', client, project_name: project, tracingEnabled: true, metadata: { model: 'echo-1' } });
  const retrieve = traceable(async (query: string) => ({ docs: [`doc about ${query}`] }), { name: 'retrieve', run_type: 'retriever', client, project_name: project, tracingEnabled: true });
  const pipeline = traceable(async (question: string) => {
    const { docs } = await retrieve(question);
    const { answer } = await llm(`${question} | ${docs.join(',')}`);
    return { answer };
  }, { name: 'pipeline', client, project_name: project, tracingEnabled: true, tags: ['e2e'] });

  const result = await pipeline('what is berth?');
  assert.equal(result.answer, 'echo: what is berth? | doc about what is berth?');
  await client.awaitPendingTraceBatches();

  const runs = await runsOf(project);
  const byName = new Map(runs.map((run) => [run.name, run]));
  assert.deepEqual([...byName.keys()].sort(), ['fake-llm', 'pipeline', 'retrieve']);
  const root = byName.get('pipeline');
  const child = byName.get('retrieve');
  const model = byName.get('fake-llm');
  assert.equal(root.is_root, true);
  assert.equal(root.parent_run_id, null);
  assert.equal(root.trace_id, root.id);
  assert.deepEqual(root.inputs, { input: 'what is berth?' });
  assert.deepEqual(root.outputs, { answer: result.answer });
  assert.deepEqual(root.tags, ['e2e']);
  assert.equal(root.status, 'success');
  for (const run of [child, model]) {
    assert.equal(run.is_root, false);
    assert.equal(run.parent_run_id, root.id);
    assert.equal(run.trace_id, root.id);
    assert.deepEqual(run.parent_run_ids, [root.id]);
    assert.ok(run.dotted_order.startsWith(`${root.dotted_order}.`));
    assert.ok(run.dotted_order.endsWith(`Z${run.id}`));
  }
  assert.ok(child.dotted_order < model.dotted_order, 'siblings sort by start');
  assert.deepEqual(child.outputs, { docs: ['doc about what is berth?'] });
  assert.equal(model.run_type, 'llm');
  assert.equal(model.extra.metadata.model, 'echo-1');
  assert.equal(model.prompt_tokens, 7);
  assert.equal(model.completion_tokens, 5);
  assert.equal(model.total_tokens, 12);
  assert.equal(model.total_cost, 0.0017);
  assert.equal(root.total_tokens, null);
  assert.ok(model.latency >= 0);

  await client.createFeedback(root.id, 'correctness', { score: 1, comment: 'right' });
  await client.createFeedback(root.id, 'correctness', { score: 0 });
  await client.createFeedback(model.id, 'helpful', { score: true });
  const read = await berth.api('GET', `/runs/${root.id}`);
  assert.equal(read.status, 200);
  assert.deepEqual(read.body.feedback_stats, { correctness: { n: 2, avg: 0.5 } });
  assert.deepEqual(read.body.direct_child_run_ids.sort(), [child.id, model.id].sort());

  const filtered = await berth.api('POST', '/runs/query', { body: { session: [root.session_id], filter: 'and(eq(feedback_key, "helpful"), gte(feedback_score, 1))' } });
  assert.deepEqual(filtered.body.runs.map((run: any) => run.name), ['fake-llm']);
  const tree = await berth.api('POST', '/runs/query', { body: { session: [root.session_id], trace_filter: 'eq(feedback_key, "correctness")', is_root: false } });
  assert.deepEqual(tree.body.runs.map((run: any) => run.name).sort(), ['fake-llm', 'retrieve']);
});

test('the SDK reads runs and projects back through its own client', async () => {
  const client = new Client({ apiUrl: berth.url, apiKey: berth.apiKey });
  const project = await client.readProject({ projectName: 'sdk-e2e' });
  assert.equal(project.name, 'sdk-e2e');
  const names: string[] = [];
  for await (const run of client.listRuns({ projectName: 'sdk-e2e', isRoot: true })) names.push(run.name);
  assert.deepEqual(names, ['pipeline']);
});

test('the SDK manages projects: create, read, list, update, delete', async () => {
  const client = new Client({ apiUrl: berth.url, apiKey: berth.apiKey });
  const created = await client.createProject({ projectName: 'sdk-managed', description: 'made by the SDK', metadata: { team: 'a' } });
  assert.equal(created.name, 'sdk-managed');
  assert.equal(await client.hasProject({ projectName: 'sdk-managed' }), true);
  const read = await client.readProject({ projectId: created.id });
  assert.equal(read.description, 'made by the SDK');
  const listed: string[] = [];
  for await (const project of client.listProjects({ nameContains: 'sdk-' })) listed.push(project.name ?? '');
  assert.deepEqual(listed.sort(), ['sdk-e2e', 'sdk-managed']);
  await client.updateProject(created.id, { name: 'sdk-managed-2', description: 'renamed' });
  assert.equal((await client.readProject({ projectId: created.id })).name, 'sdk-managed-2');
  await client.deleteProject({ projectId: created.id });
  assert.equal(await client.hasProject({ projectName: 'sdk-managed-2' }), false);
});

test('unbatched SDK clients (POST /runs, PATCH /runs/{id}) store the same tree', async () => {
  const client = new Client({ apiUrl: berth.url, apiKey: berth.apiKey, autoBatchTracing: false });
  const project = 'sdk-unbatched';
  const inner = traceable(async (x: number) => ({ doubled: x * 2 }), { name: 'inner', run_type: 'tool', client, project_name: project, tracingEnabled: true });
  const outer = traceable(async (x: number) => (await inner(x)).doubled + 1, { name: 'outer', client, project_name: project, tracingEnabled: true });
  assert.equal(await outer(20), 41);
  // Unbatched updates are sent in the background: wait until both runs have ended.
  const runs = await eventually(async () => {
    const page = await berth.api('POST', '/runs/query', { body: { filter: 'eq(status, "success")', limit: 100 } });
    const found = page.body.runs.filter((run: any) => run.name === 'inner' || run.name === 'outer');
    return found.length === 2 ? found : undefined;
  }, 20_000, 'both unbatched runs to end');
  const byName = new Map<string, any>(runs.map((run: any) => [run.name, run]));
  assert.deepEqual([...byName.keys()].sort(), ['inner', 'outer']);
  assert.equal(byName.get('inner').parent_run_id, byName.get('outer').id);
  assert.deepEqual(byName.get('inner').outputs, { doubled: 40 });
  assert.deepEqual(byName.get('outer').outputs, { outputs: 41 });
  assert.equal(byName.get('outer').status, 'success');
});
