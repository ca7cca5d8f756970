// Deployments through the HTTP API: create/get/list/patch/delete, source rules, error bodies, isolation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { otherWorkspace, startTestBerth, type TestBerth } from '../helpers/berth.ts';

let server: TestBerth;
before(async () => {
  server = await startTestBerth();
});
after(() => server.close());

const image = (name: string, extra: Record<string, unknown> = {}) => ({
  name, source: 'external_container', source_config: {}, source_revision_config: { image_uri: 'registry.local/agent:1' }, secrets: [], ...extra,
});
const git = (name: string, extra: Record<string, unknown> = {}) => ({
  name, source: 'git_hosting', source_config: { repo_url: '/nonexistent/repo.git', build_on_push: false },
  source_revision_config: { repo_ref: 'main', graph_config_path: 'langgraph.json' }, secrets: [], ...extra,
});

describe('create and read', () => {
  test('POST answers 201 with the deployment, its first revision and secret names only', async () => {
    const created = await server.api('POST', '/v2/deployments', { body: image('first', { secrets: [{ name: 'OPENAI_API_KEY', value: 'sk-very-secret' }] }) });
    assert.equal(created.status, 201);
    const deployment = created.body;
    assert.match(deployment.id, /^[0-9a-f-]{36}$/);
    assert.match(deployment.latest_revision_id, /^[0-9a-f-]{36}$/);
    assert.equal(deployment.tenant_id, server.workspaceId);
    assert.equal(deployment.source, 'external_container');
    assert.deepEqual(deployment.secrets, [{ name: 'OPENAI_API_KEY' }]);
    assert.deepEqual(deployment.source_revision_config, { repo_ref: null, graph_config_path: null, image_uri: 'registry.local/agent:1', repo_commit_sha: null });
    assert.match(deployment.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    assert.equal(deployment.active_revision_id, null);

    const fetched = await server.api('GET', `/v2/deployments/${deployment.id}`);
    assert.equal(fetched.status, 200);
    assert.deepEqual(fetched.body, deployment);
    assert.ok(!JSON.stringify(fetched.body).includes('sk-very-secret'));

    // The secret is stored encrypted, not in the clear.
    const rows = await server.berth.db.query<{ secrets: unknown }>('SELECT secrets FROM deployments WHERE id = $1', [deployment.id]);
    assert.ok(!JSON.stringify(rows).includes('sk-very-secret'));
  });

  test('public source names are accepted as aliases and answered with the neutral names', async () => {
    const created = await server.api('POST', '/v2/deployments', {
      body: { ...git('aliased'), source: 'github', source_revision_config: { repo_ref: 'main', langgraph_config_path: 'x' } },
    });
    assert.equal(created.status, 422, 'langgraph_config_path is not a field of ours: graph_config_path is missing');
    const ok = await server.api('POST', '/v2/deployments', { body: { ...git('aliased'), source: 'github' } });
    assert.equal(ok.status, 201);
    assert.equal(ok.body.source, 'git_hosting');
  });

  test('a duplicate name in one workspace is a 409', async () => {
    assert.equal((await server.api('POST', '/v2/deployments', { body: image('dup') })).status, 201);
    const again = await server.api('POST', '/v2/deployments', { body: image('dup') });
    assert.equal(again.status, 409);
    assert.match(again.body.detail, /already exists/);
  });
});

describe('validation', () => {
  test('an unknown source is a literal_error naming every accepted value', async () => {
    const response = await server.api('POST', '/v2/deployments', { body: image('bad', { source: 'gitlab' }) });
    assert.equal(response.status, 422);
    assert.deepEqual(response.body.detail, [{
      type: 'literal_error', loc: ['body', 'source'],
      msg: "Input should be 'git_hosting', 'external_container', 'github' or 'external_docker'", input: 'gitlab',
      ctx: { expected: "'git_hosting', 'external_container', 'github' or 'external_docker'" },
    }]);
  });

  test('a blank name is refused (it also names the tracing project)', async () => {
    const response = await server.api('POST', '/v2/deployments', { body: image('   ') });
    assert.equal(response.status, 422);
    assert.equal(response.body.detail[0].type, 'string_pattern_mismatch');
    assert.deepEqual(response.body.detail[0].loc, ['body', 'name']);
    assert.equal((await server.api('GET', '/v2/deployments?name_contains=%20%20%20')).body.resources.length, 0);
  });

  test('several bad fields give several entries, missing ones carry the enclosing object', async () => {
    const body = { name: 'x', source: 'external_container', source_config: { deployment_type: 'serverless' }, source_revision_config: {} };
    const response = await server.api('POST', '/v2/deployments', { body });
    assert.equal(response.status, 422);
    assert.deepEqual(response.body.detail.map((item: any) => [item.type, item.loc]), [
      ['literal_error', ['body', 'source_config', 'deployment_type']],
      ['missing', ['body', 'secrets']],
    ]);
    assert.deepEqual(response.body.detail[1].input, body);
  });

  test('source-specific fields: git fields on an image deployment and the reverse', async () => {
    const imageWithRef = await server.api('POST', '/v2/deployments', { body: image('v1', { source_revision_config: { image_uri: 'a:1', repo_ref: 'main' } }) });
    assert.equal(imageWithRef.status, 422);
    assert.deepEqual(imageWithRef.body.detail[0].loc, ['body', 'source_revision_config', 'repo_ref']);
    assert.equal(imageWithRef.body.detail[0].type, 'value_error');

    const gitWithImage = await server.api('POST', '/v2/deployments', { body: git('v2', { source_revision_config: { repo_ref: 'main', graph_config_path: 'langgraph.json', image_uri: 'a:1' } }) });
    assert.equal(gitWithImage.status, 422);
    assert.deepEqual(gitWithImage.body.detail.map((item: any) => item.loc), [['body', 'source_revision_config', 'image_uri']]);

    const gitMissing = await server.api('POST', '/v2/deployments', { body: git('v3', { source_config: {}, source_revision_config: {} }) });
    assert.deepEqual(gitMissing.body.detail.map((item: any) => [item.type, item.loc]), [
      ['missing', ['body', 'source_config', 'repo_url']],
      ['missing', ['body', 'source_revision_config', 'graph_config_path']],
    ]);
    const imageMissing = await server.api('POST', '/v2/deployments', { body: image('v4', { source_revision_config: {} }) });
    assert.deepEqual(imageMissing.body.detail.map((item: any) => [item.type, item.loc]), [['missing', ['body', 'source_revision_config', 'image_uri']]]);
  });

  test('a tag ref cannot be built on push', async () => {
    const response = await server.api('POST', '/v2/deployments', {
      body: git('tagged', { source_config: { repo_url: '/x', build_on_push: true }, source_revision_config: { repo_ref: 'refs/tags/v1.0.0', graph_config_path: 'langgraph.json' } }),
    });
    assert.equal(response.status, 422);
    assert.deepEqual(response.body.detail[0].loc, ['body', 'source_config', 'build_on_push']);
    assert.match(response.body.detail[0].msg, /^Value error, build_on_push cannot be enabled when repo_ref is a tag/);
    const withoutPush = await server.api('POST', '/v2/deployments', {
      body: git('tagged', { source_config: { repo_url: '/x', build_on_push: false }, source_revision_config: { repo_ref: 'refs/tags/v1.0.0', graph_config_path: 'langgraph.json' } }),
    });
    assert.equal(withoutPush.status, 201);
  });

  test('bad path ids are uuid_parsing 422s; unknown ids are 404 with the spec text', async () => {
    const bad = await server.api('GET', '/v2/deployments/not-a-uuid');
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body, { detail: [{
      type: 'uuid_parsing', loc: ['path', 'deployment_id'],
      msg: 'Input should be a valid UUID, invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1',
      input: 'not-a-uuid',
      ctx: { error: 'invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1' },
    }] });
    const id = '6f1c1a2e-1111-4222-8333-444455556666';
    for (const [method, path] of [['GET', `/v2/deployments/${id}`], ['PATCH', `/v2/deployments/${id}`], ['DELETE', `/v2/deployments/${id}`]] as const) {
      const response = await server.api(method, path, method === 'PATCH' ? { body: {} } : {});
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.deepEqual(response.body, { detail: `Deployment ID ${id} not found.` });
    }
  });
});

describe('list', () => {
  test('filters, pagination and the next offset', async () => {
    for (const name of ['list-alpha', 'list-beta', 'list-gamma']) await server.api('POST', '/v2/deployments', { body: image(name) });
    const page1 = await server.api('GET', '/v2/deployments?name_contains=LIST-&limit=2');
    assert.equal(page1.status, 200);
    assert.deepEqual(page1.body.resources.map((d: any) => d.name), ['list-gamma', 'list-beta'], 'newest first');
    assert.equal(page1.body.offset, 2);
    const page2 = await server.api('GET', `/v2/deployments?name_contains=list-&limit=2&offset=${page1.body.offset}`);
    assert.deepEqual(page2.body.resources.map((d: any) => d.name), ['list-alpha']);
    assert.equal(page2.body.offset, 3);

    const alpha = page2.body.resources[0];
    const byIds = await server.api('GET', `/v2/deployments?deployment_ids=${alpha.id}`);
    assert.deepEqual(byIds.body.resources.map((d: any) => d.id), [alpha.id]);
    const badIds = await server.api('GET', '/v2/deployments?deployment_ids=nope');
    assert.equal(badIds.status, 422);
    assert.equal(badIds.body.detail[0].type, 'uuid_parsing');
    assert.deepEqual(badIds.body.detail[0].loc, ['query', 'deployment_ids']);

    const unreconciled = await server.api('GET', '/v2/deployments?remote_reconciled=false&name_contains=list-');
    assert.equal(unreconciled.body.resources.length, 3);
    const reconciled = await server.api('GET', '/v2/deployments?remote_reconciled=true&name_contains=list-');
    assert.equal(reconciled.body.resources.length, 0);

    const limits = await server.api('GET', '/v2/deployments?limit=0&offset=-1&deployment_type=foo');
    assert.deepEqual(limits.body.detail.map((item: any) => [item.type, item.loc]), [
      ['greater_than_equal', ['query', 'limit']],
      ['greater_than_equal', ['query', 'offset']],
      ['literal_error', ['query', 'deployment_type']],
    ]);
  });
});

describe('patch', () => {
  test('revision-creating fields move latest_revision_id; others do not', async () => {
    const created = (await server.api('POST', '/v2/deployments', { body: image('patchable') })).body;
    const noRevision = await server.api('PATCH', `/v2/deployments/${created.id}`, { body: { source_config: { resource_spec: null } } });
    assert.equal(noRevision.status, 200);
    assert.equal(noRevision.body.latest_revision_id, created.latest_revision_id);

    const newImage = await server.api('PATCH', `/v2/deployments/${created.id}`, { body: { source_revision_config: { image_uri: 'registry.local/agent:2' } } });
    assert.equal(newImage.status, 200);
    assert.notEqual(newImage.body.latest_revision_id, created.latest_revision_id);
    assert.equal(newImage.body.source_revision_config.image_uri, 'registry.local/agent:2');

    const newSecrets = await server.api('PATCH', `/v2/deployments/${created.id}`, { body: { secrets: [{ name: 'B', value: '2' }, { name: 'A', value: '1' }] } });
    assert.notEqual(newSecrets.body.latest_revision_id, newImage.body.latest_revision_id);
    assert.deepEqual(newSecrets.body.secrets, [{ name: 'A' }, { name: 'B' }]);
    assert.equal(newSecrets.body.source_revision_config.image_uri, 'registry.local/agent:2', 'the new revision keeps the image');

    const revisions = await server.api('GET', `/v2/deployments/${created.id}/revisions`);
    assert.equal(revisions.body.resources.length, 3);
  });

  test('the source and immutable source settings cannot change; git fields are refused on images', async () => {
    const created = (await server.api('POST', '/v2/deployments', { body: git('immutable') })).body;
    const source = await server.api('PATCH', `/v2/deployments/${created.id}`, { body: { revision_source: 'external_container' } });
    assert.equal(source.status, 422);
    assert.deepEqual(source.body.detail[0].loc, ['body', 'revision_source']);
    const repo = await server.api('PATCH', `/v2/deployments/${created.id}`, { body: { source_config: { repo_url: '/elsewhere' } } });
    assert.equal(repo.status, 422);
    assert.deepEqual(repo.body.detail[0].loc, ['body', 'source_config', 'repo_url']);
    const imageOnGit = await server.api('PATCH', `/v2/deployments/${created.id}`, { body: { source_revision_config: { image_uri: 'a:1' } } });
    assert.equal(imageOnGit.status, 422);
    const tagPush = await server.api('PATCH', `/v2/deployments/${created.id}`, { body: { source_config: { build_on_push: true }, source_revision_config: { repo_ref: 'refs/tags/v2' } } });
    assert.equal(tagPush.status, 422);
    const readOnlySha = await server.api('PATCH', `/v2/deployments/${created.id}`, { body: { source_revision_config: { repo_commit_sha: 'abc' } } });
    assert.equal(readOnlySha.status, 200, 'repo_commit_sha is read-only: ignored');
    assert.equal(readOnlySha.body.source_revision_config.repo_commit_sha, null);
    assert.equal(readOnlySha.body.latest_revision_id, created.latest_revision_id);
  });
});

describe('tracing project', () => {
  test('a deployment creates a tracing project of its name; delete_tracing_project=true removes it', async () => {
    const projectsNamed = async (name: string) => ((await server.api('GET', `/sessions?name=${name}`)).body as { name: string }[]).filter((p) => p.name === name);
    const kept = (await server.api('POST', '/v2/deployments', { body: image('traced-kept') })).body;
    const dropped = (await server.api('POST', '/v2/deployments', { body: image('traced-dropped') })).body;
    assert.equal((await projectsNamed('traced-kept')).length, 1);
    assert.equal((await projectsNamed('traced-dropped')).length, 1);
    assert.equal((await server.api('DELETE', `/v2/deployments/${kept.id}`)).status, 204);
    assert.equal((await server.api('DELETE', `/v2/deployments/${dropped.id}?delete_tracing_project=true`)).status, 204);
    assert.equal((await projectsNamed('traced-kept')).length, 1, 'kept by default');
    assert.equal((await projectsNamed('traced-dropped')).length, 0);
  });
});

describe('delete and isolation', () => {
  test('DELETE is 204, then 404', async () => {
    const created = (await server.api('POST', '/v2/deployments', { body: image('doomed') })).body;
    const deleted = await server.api('DELETE', `/v2/deployments/${created.id}`);
    assert.equal(deleted.status, 204);
    assert.equal((await server.api('GET', `/v2/deployments/${created.id}`)).status, 404);
    assert.equal((await server.api('GET', `/v2/deployments/${created.id}/revisions`)).status, 404);
  });

  test('another workspace sees 404 for every path of a deployment it does not own', async () => {
    const mine = (await server.api('POST', '/v2/deployments', { body: image('private') })).body;
    const other = (await otherWorkspace(server, 'other')).api;
    const paths: [string, string, unknown?][] = [
      ['GET', `/v2/deployments/${mine.id}`],
      ['PATCH', `/v2/deployments/${mine.id}`, { source_revision_config: { image_uri: 'evil:1' } }],
      ['DELETE', `/v2/deployments/${mine.id}`],
      ['GET', `/v2/deployments/${mine.id}/revisions`],
      ['GET', `/v2/deployments/${mine.id}/revisions/${mine.latest_revision_id}`],
      ['POST', `/v2/deployments/${mine.id}/revisions/${mine.latest_revision_id}/redeploy`],
      ['POST', `/v2/deployments/${mine.id}/revisions/${mine.latest_revision_id}/interrupt`],
      ['GET', `/v2/deployments/${mine.id}/revisions/${mine.latest_revision_id}/logs`],
    ];
    for (const [method, path, body] of paths) {
      const response = await other(method, path, body === undefined ? {} : { body });
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.deepEqual(response.body, { detail: `Deployment ID ${mine.id} not found.` });
    }
    assert.equal((await other('GET', '/v2/deployments')).body.resources.length, 0);
    const still = await server.api('GET', `/v2/deployments/${mine.id}`);
    assert.equal(still.body.source_revision_config.image_uri, 'registry.local/agent:1');
  });
});
