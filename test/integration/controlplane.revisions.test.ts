// Revisions: listing rules of the spec, supersede, interrupt, redeploy, data plane reports.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, startTestBerth, type TestBerth } from '../helpers/berth.ts';

let server: TestBerth;
before(async () => {
  server = await startTestBerth();
});
after(() => server.close());

async function createImageDeployment(name: string, image = 'registry.local/agent:1') {
  const response = await server.api('POST', '/v2/deployments', {
    body: { name, source: 'external_container', source_config: {}, source_revision_config: { image_uri: image }, secrets: [] },
  });
  assert.equal(response.status, 201);
  return response.body;
}

async function revisionStatus(deploymentId: string, revisionId: string): Promise<string> {
  return (await server.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body.status;
}

describe('list revisions', () => {
  test('newest first, limit/offset, next offset, status and remote_reconciled filters', async () => {
    const deployment = await createImageDeployment('many-revisions');
    const ids = [deployment.latest_revision_id];
    for (let i = 2; i <= 5; i++) {
      const patched = await server.api('PATCH', `/v2/deployments/${deployment.id}`, { body: { source_revision_config: { image_uri: `registry.local/agent:${i}` } } });
      ids.push(patched.body.latest_revision_id);
    }
    const all = await server.api('GET', `/v2/deployments/${deployment.id}/revisions`);
    assert.equal(all.status, 200);
    assert.deepEqual(all.body.resources.map((r: any) => r.id), [...ids].reverse());
    assert.equal(all.body.offset, 5);
    assert.deepEqual(all.body.resources[0].source_revision_config, { repo_ref: null, graph_config_path: null, image_uri: 'registry.local/agent:5', repo_commit_sha: null });

    const page = await server.api('GET', `/v2/deployments/${deployment.id}/revisions?limit=2&offset=1`);
    assert.deepEqual(page.body.resources.map((r: any) => r.id), [ids[3], ids[2]]);
    assert.equal(page.body.offset, 3);
    const past = await server.api('GET', `/v2/deployments/${deployment.id}/revisions?offset=10`);
    assert.deepEqual(past.body, { resources: [], offset: 10 });

    // Older ones were superseded while waiting; the newest waits for a data plane.
    const latest = ids.at(-1);
    await eventually(async () => ((await revisionStatus(deployment.id, latest)) === 'AWAITING_DEPLOY' ? true : undefined));
    const skipped = await server.api('GET', `/v2/deployments/${deployment.id}/revisions?status=SKIPPED`);
    assert.deepEqual(skipped.body.resources.map((r: any) => r.id), ids.slice(0, 4).reverse());
    assert.ok(skipped.body.resources.every((r: any) => r.status === 'SKIPPED' && /Superseded by revision/.test(r.status_message)));
    const either = await server.api('GET', `/v2/deployments/${deployment.id}/revisions?status=AWAITING_DEPLOY,%20SKIPPED&limit=100`);
    assert.equal(either.body.resources.length, 5);
    const waiting = await server.api('GET', `/v2/deployments/${deployment.id}/revisions?status=AWAITING_DEPLOY&remote_reconciled=false`);
    assert.deepEqual(waiting.body.resources.map((r: any) => r.id), [latest]);
    const reconciled = await server.api('GET', `/v2/deployments/${deployment.id}/revisions?remote_reconciled=yes`);
    assert.deepEqual(reconciled.body.resources, []);
  });

  test('every bad parameter is reported, pydantic style', async () => {
    const deployment = await createImageDeployment('bad-params');
    const base = `/v2/deployments/${deployment.id}/revisions`;
    const cases: [string, unknown][] = [
      ['?limit=0', [{ type: 'greater_than_equal', loc: ['query', 'limit'], msg: 'Input should be greater than or equal to 1', input: '0', ctx: { ge: 1 } }]],
      ['?limit=101', [{ type: 'less_than_equal', loc: ['query', 'limit'], msg: 'Input should be less than or equal to 100', input: '101', ctx: { le: 100 } }]],
      ['?offset=-1', [{ type: 'greater_than_equal', loc: ['query', 'offset'], msg: 'Input should be greater than or equal to 0', input: '-1', ctx: { ge: 0 } }]],
      ['?limit=abc', [{ type: 'int_parsing', loc: ['query', 'limit'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'abc' }]],
      ['?remote_reconciled=maybe', [{ type: 'bool_parsing', loc: ['query', 'remote_reconciled'], msg: 'Input should be a valid boolean, unable to interpret input', input: 'maybe' }]],
    ];
    for (const [query, detail] of cases) {
      const response = await server.api('GET', `${base}${query}`);
      assert.equal(response.status, 422, query);
      assert.deepEqual(response.body, { detail }, query);
    }
    const status = await server.api('GET', `${base}?status=DEPLOYED,BOGUS`);
    assert.equal(status.status, 422);
    assert.equal(status.body.detail.length, 1);
    assert.equal(status.body.detail[0].type, 'literal_error');
    assert.deepEqual(status.body.detail[0].loc, ['query', 'status']);
    assert.equal(status.body.detail[0].input, 'BOGUS');
    assert.match(status.body.detail[0].msg, /^Input should be 'CREATING', 'QUEUED', .* or 'UNKNOWN'$/);

    const several = await server.api('GET', `${base}?limit=0&offset=x&remote_reconciled=2`);
    assert.deepEqual(several.body.detail.map((item: any) => item.loc), [['query', 'limit'], ['query', 'offset'], ['query', 'remote_reconciled']]);

    const missing = '11111111-2222-4333-8444-555555555555';
    const notFound = await server.api('GET', `/v2/deployments/${missing}/revisions`);
    assert.equal(notFound.status, 404);
    assert.deepEqual(notFound.body, { detail: `Deployment ID ${missing} not found.` });
    const noRevision = await server.api('GET', `/v2/deployments/${deployment.id}/revisions/${missing}`);
    assert.equal(noRevision.status, 404);
    assert.deepEqual(noRevision.body, { detail: `Revision ID ${missing} not found.` });
  });
});

describe('revision actions', () => {
  test('a data plane reports DEPLOYING then DEPLOYED; the deployment points at it', async () => {
    const deployment = await createImageDeployment('deployable');
    const revisionId = deployment.latest_revision_id;
    await eventually(async () => ((await revisionStatus(deployment.id, revisionId)) === 'AWAITING_DEPLOY' ? true : undefined));
    const pending = await server.berth.controlPlane.dataPlane.pending(100);
    assert.ok(pending.some((revision) => revision.id === revisionId));

    const report = (status: string, extra = {}) => server.api('POST', `/v2/deployments/${deployment.id}/revisions/${revisionId}/deploy-status`, { body: { status, ...extra } });
    const deploying = await report('DEPLOYING');
    assert.equal(deploying.status, 200);
    assert.equal(deploying.body.status, 'DEPLOYING');
    assert.equal(deploying.body.remote_reconciled, true);
    const deployed = await report('DEPLOYED', { url: 'http://127.0.0.1:9999' });
    assert.equal(deployed.body.status, 'DEPLOYED');
    const after = (await server.api('GET', `/v2/deployments/${deployment.id}`)).body;
    assert.equal(after.active_revision_id, revisionId);
    assert.equal(after.url, 'http://127.0.0.1:9999');
    const again = await report('DEPLOYING');
    assert.equal(again.status, 400, 'a final revision cannot move');
    assert.match(again.body.detail, /is DEPLOYED/);
    const reconciled = await server.api('GET', '/v2/deployments?remote_reconciled=true&name_contains=deployable');
    assert.equal(reconciled.body.resources.length, 1);
  });

  test('interrupt stops a waiting revision; a final one cannot be interrupted', async () => {
    const deployment = await createImageDeployment('interruptible');
    const path = `/v2/deployments/${deployment.id}/revisions/${deployment.latest_revision_id}/interrupt`;
    const listing = `/v2/deployments/${deployment.id}/revisions?limit=5`;
    assert.notEqual((await server.api('GET', listing)).body.resources[0].status, 'INTERRUPTED');
    const interrupted = await server.api('POST', path);
    assert.equal(interrupted.status, 200);
    assert.equal(interrupted.body.status, 'INTERRUPTED');
    // The same listing again (its page was cached) shows the change at once.
    assert.equal((await server.api('GET', listing)).body.resources[0].status, 'INTERRUPTED');
    const twice = await server.api('POST', path);
    assert.equal(twice.status, 400);
    assert.match(twice.body.detail, /already INTERRUPTED/);
  });

  test('redeploy creates a new revision with the old configuration', async () => {
    const deployment = await createImageDeployment('rollback', 'registry.local/agent:old');
    const first = deployment.latest_revision_id;
    await server.api('PATCH', `/v2/deployments/${deployment.id}`, { body: { source_revision_config: { image_uri: 'registry.local/agent:new' } } });
    const redeployed = await server.api('POST', `/v2/deployments/${deployment.id}/revisions/${first}/redeploy`);
    assert.equal(redeployed.status, 200);
    assert.equal(redeployed.body.source_revision_config.image_uri, 'registry.local/agent:old');
    assert.notEqual(redeployed.body.latest_revision_id, first);
    const list = (await server.api('GET', `/v2/deployments/${deployment.id}/revisions`)).body.resources;
    assert.equal(list.length, 3);
    assert.equal(list[0].id, redeployed.body.latest_revision_id);
  });

  test('logs of an image revision say it waits for a data plane', async () => {
    const deployment = await createImageDeployment('logged');
    const path = `/v2/deployments/${deployment.id}/revisions/${deployment.latest_revision_id}/logs`;
    const logs = await eventually(async () => {
      const response = await server.api('GET', path);
      return response.body.logs.length > 0 ? response.body : undefined;
    });
    assert.match(logs.logs[0].message, /nothing to build/);
    assert.equal(logs.logs[0].level, 'INFO');
    assert.equal(logs.next_offset, null);
  });
});
