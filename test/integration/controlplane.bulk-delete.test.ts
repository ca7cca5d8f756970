// DELETE /v2/deployments?deployment_ids=…: bulk delete with partial success, its error bodies and isolation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { otherWorkspace, startTestBerth, type ApiClient, type TestBerth } from '../helpers/berth.ts';

let server: TestBerth;
before(async () => {
  server = await startTestBerth();
});
after(() => server.close());

let counter = 0;
async function deploy(api: ApiClient = server.api, name = `bulk-${++counter}`): Promise<{ id: string; name: string }> {
  const response = await api('POST', '/v2/deployments', {
    body: { name, source: 'external_container', source_config: {}, source_revision_config: { image_uri: 'registry.local/agent:1' }, secrets: [] },
  });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body;
}

const query = (ids: string[]) => ids.map((id) => `deployment_ids=${id}`).join('&');
const unknown = (n: number) => `6f1c1a2e-1111-4222-8333-${String(n).padStart(12, '0')}`;
const notFound = (id: string) => ({ deployment_id: id, status_code: 404, detail: `Deployment ID ${id} not found.` });

async function exists(id: string, api: ApiClient = server.api): Promise<boolean> {
  return (await api('GET', `/v2/deployments/${id}`)).status === 200;
}

describe('bulk delete', () => {
  test('200 when every id was deleted, with their revisions; a repeated id counts once', async () => {
    const [a, b] = [await deploy(), await deploy()];
    const response = await server.api('DELETE', `/v2/deployments?${query([a.id, b.id, a.id.toUpperCase()])}`);
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, { deleted: [a.id, b.id], failed: [] });
    assert.equal(await exists(a.id), false);
    assert.equal(await exists(b.id), false);
    const revisions = await server.berth.db.query('SELECT id FROM revisions WHERE deployment_id IN ($1, $2)', [a.id, b.id]);
    assert.equal(revisions.length, 0);

    const one = await deploy();
    const single = await server.api('DELETE', `/v2/deployments?deployment_ids=${one.id}`);
    assert.deepEqual([single.status, single.body], [200, { deleted: [one.id], failed: [] }]);
  });

  test('207 when some failed: unknown ids and another workspace\'s are failures, never deleted', async () => {
    const mine = await deploy();
    const other = await otherWorkspace(server, 'bulk-other');
    const theirs = await deploy(other.api);
    const response = await server.api('DELETE', `/v2/deployments?${query([unknown(1), mine.id, theirs.id])}`);
    assert.equal(response.status, 207);
    assert.deepEqual(response.body, { deleted: [mine.id], failed: [notFound(unknown(1)), notFound(theirs.id)] });
    assert.equal(await exists(mine.id), false);
    assert.equal(await exists(theirs.id, other.api), true);

    // The other workspace's key cannot delete this workspace's deployments either.
    const kept = await deploy();
    const refused = await other.api('DELETE', `/v2/deployments?${query([kept.id])}`);
    assert.deepEqual([refused.status, refused.body], [404, { detail: `Deployment ID ${kept.id} not found.` }]);
    assert.equal(await exists(kept.id), true);
  });

  test('404 with the single DELETE\'s body when none was deleted', async () => {
    const response = await server.api('DELETE', `/v2/deployments?${query([unknown(2), unknown(3)])}`);
    assert.equal(response.status, 404);
    assert.deepEqual(response.body, { detail: `Deployment ID ${unknown(2)} not found.` });
  });

  test('delete_tracing_project applies to each deployment, as on the single DELETE', async () => {
    const projectsNamed = async (name: string) => ((await server.api('GET', `/sessions?name=${name}`)).body as { name: string }[]).filter((p) => p.name === name);
    const [kept, dropped1, dropped2] = [await deploy(), await deploy(), await deploy()];
    assert.equal((await server.api('DELETE', `/v2/deployments?deployment_ids=${kept.id}`)).status, 200);
    assert.equal((await projectsNamed(kept.name)).length, 1, 'kept by default');
    assert.equal((await server.api('DELETE', `/v2/deployments?${query([dropped1.id, dropped2.id])}&delete_tracing_project=true`)).status, 200);
    assert.equal((await projectsNamed(dropped1.name)).length, 0);
    assert.equal((await projectsNamed(dropped2.name)).length, 0);
  });

  test('up to 100 ids are accepted', async () => {
    const mine = await deploy();
    const ids = [mine.id, ...Array.from({ length: 99 }, (_, i) => unknown(100 + i))];
    const response = await server.api('DELETE', `/v2/deployments?${query(ids)}`);
    assert.equal(response.status, 207);
    assert.deepEqual(response.body.deleted, [mine.id]);
    assert.equal(response.body.failed.length, 99);
  });
});

describe('bulk delete validation', () => {
  test('deployment_ids is required', async () => {
    const response = await server.api('DELETE', '/v2/deployments');
    assert.equal(response.status, 422);
    assert.deepEqual(response.body, { detail: [{ type: 'missing', loc: ['query', 'deployment_ids'], msg: 'Field required', input: null }] });
  });

  test('a bad id is a uuid_parsing 422 at its index, and nothing is deleted', async () => {
    const mine = await deploy();
    const response = await server.api('DELETE', `/v2/deployments?${query([mine.id, 'not-a-uuid'])}`);
    assert.equal(response.status, 422);
    const error = 'invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1';
    assert.deepEqual(response.body, { detail: [{
      type: 'uuid_parsing', loc: ['query', 'deployment_ids', 1], msg: `Input should be a valid UUID, ${error}`, input: 'not-a-uuid', ctx: { error },
    }] });
    assert.equal(await exists(mine.id), true);

    const commaSeparated = await server.api('DELETE', `/v2/deployments?deployment_ids=${mine.id},${unknown(4)}`);
    assert.equal(commaSeparated.status, 422, 'one key per id, as FastAPI reads a list query parameter');
    assert.deepEqual(commaSeparated.body.detail.map((item: any) => [item.type, item.loc]), [['uuid_parsing', ['query', 'deployment_ids', 0]]]);
    assert.equal(await exists(mine.id), true);
  });

  test('more than 100 ids is a too_long 422, and nothing is deleted', async () => {
    const mine = await deploy();
    const ids = [mine.id, ...Array.from({ length: 100 }, (_, i) => unknown(200 + i))];
    const response = await server.api('DELETE', `/v2/deployments?${query(ids)}`);
    assert.equal(response.status, 422);
    assert.deepEqual(response.body, { detail: [{
      type: 'too_long', loc: ['query', 'deployment_ids'], msg: 'List should have at most 100 items after validation, not 101', input: ids,
      ctx: { field_type: 'List', max_length: 100, actual_length: 101 },
    }] });
    assert.equal(await exists(mine.id), true);
  });

  test('a bad delete_tracing_project is a bool_parsing 422', async () => {
    const response = await server.api('DELETE', `/v2/deployments?deployment_ids=${unknown(5)}&delete_tracing_project=maybe`);
    assert.equal(response.status, 422);
    assert.deepEqual(response.body.detail.map((item: any) => [item.type, item.loc]), [['bool_parsing', ['query', 'delete_tracing_project']]]);
  });
});
