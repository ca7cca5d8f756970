// The revision pipeline on real local git repositories: builds, each kind of failure, live logs,
// superseding a running build, tags and redeploying an exact commit.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, startTestBerth, type TestBerth } from '../helpers/berth.ts';
import { AGENT_PROJECT, commitFiles, createRepo, git } from '../helpers/git-repo.ts';

let server: TestBerth;
let repo: { dir: string; commit: string };
before(async () => {
  server = await startTestBerth();
  repo = await createRepo(AGENT_PROJECT);
});
after(() => server.close());

let counter = 0;
async function deployFromGit(options: { repoUrl?: string; ref?: string; config?: string; install?: string; build?: string } = {}) {
  const response = await server.api('POST', '/v2/deployments', {
    body: {
      name: `git-${++counter}`,
      source: 'git_hosting',
      source_config: { repo_url: options.repoUrl ?? repo.dir, install_command: options.install ?? null, build_command: options.build ?? null },
      source_revision_config: { repo_ref: options.ref ?? 'main', graph_config_path: options.config ?? 'langgraph.json' },
      secrets: [],
    },
  });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body as { id: string; latest_revision_id: string };
}

const FINAL = new Set(['AWAITING_DEPLOY', 'BUILD_FAILED', 'CREATE_FAILED', 'SKIPPED', 'INTERRUPTED']);

async function settled(deploymentId: string, revisionId: string) {
  return eventually(async () => {
    const revision = (await server.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body;
    return FINAL.has(revision.status) ? revision : undefined;
  }, 60_000, `revision ${revisionId} to settle`);
}

async function logText(deploymentId: string, revisionId: string): Promise<string> {
  const response = await server.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}/logs?limit=1000`);
  return response.body.logs.map((line: any) => line.message).join('\n');
}

describe('successful builds', () => {
  test('fetch, record the commit, check the configuration, install and build', async () => {
    const deployment = await deployFromGit({ install: 'echo installing deps', build: 'echo building in $(basename $PWD) && test -f langgraph.json' });
    const revision = await settled(deployment.id, deployment.latest_revision_id);
    assert.equal(revision.status, 'AWAITING_DEPLOY', revision.status_message);
    assert.equal(revision.remote_reconciled, false);
    assert.equal(revision.source_revision_config.repo_commit_sha, repo.commit);
    const logs = await logText(deployment.id, revision.id);
    assert.match(logs, /Checked out commit [0-9a-f]{40}/);
    assert.match(logs, /graphs agent/);
    assert.match(logs, /installing deps/);
    assert.match(logs, /building in repo/);
    const fetched = (await server.api('GET', `/v2/deployments/${deployment.id}`)).body;
    assert.equal(fetched.source_revision_config.repo_commit_sha, repo.commit);
  });

  test('a tag ref builds the tagged commit; redeploy rebuilds that exact commit after main moved', async () => {
    git(repo.dir, 'tag', 'v1');
    const tagged = await deployFromGit({ ref: 'refs/tags/v1' });
    const first = await settled(tagged.id, tagged.latest_revision_id);
    assert.equal(first.status, 'AWAITING_DEPLOY', first.status_message);
    assert.equal(first.source_revision_config.repo_commit_sha, repo.commit);

    const onMain = await deployFromGit();
    const before = await settled(onMain.id, onMain.latest_revision_id);
    const newer = await commitFiles(repo.dir, { 'README.md': 'second commit\n' }, 'second');
    const patched = await server.api('PATCH', `/v2/deployments/${onMain.id}`, { body: { source_revision_config: { repo_ref: 'main' } } });
    const moved = await settled(onMain.id, patched.body.latest_revision_id);
    assert.equal(moved.source_revision_config.repo_commit_sha, newer);
    const redeployed = await server.api('POST', `/v2/deployments/${onMain.id}/revisions/${before.id}/redeploy`);
    const rollback = await settled(onMain.id, redeployed.body.latest_revision_id);
    assert.equal(rollback.status, 'AWAITING_DEPLOY', rollback.status_message);
    assert.equal(rollback.source_revision_config.repo_commit_sha, repo.commit);
  });
});

describe('failures end in BUILD_FAILED with the reason kept', () => {
  const cases: [string, () => Promise<{ id: string; latest_revision_id: string }>, RegExp][] = [
    ['unknown ref', () => deployFromGit({ ref: 'no-such-branch' }), /git fetch of no-such-branch failed/],
    ['unreachable repository', () => deployFromGit({ repoUrl: '/nonexistent/repository' }), /git fetch of main failed/],
    ['missing configuration', () => deployFromGit({ config: 'missing/langgraph.json' }), /missing\/langgraph\.json does not exist/],
    ['configuration outside the repository', () => deployFromGit({ config: '../../etc/passwd' }), /points outside the repository/],
    ['install command fails', () => deployFromGit({ install: 'echo about to fail; exit 3' }), /install command failed \(exit code 3\)/],
    ['build command fails', () => deployFromGit({ build: 'false' }), /build command failed \(exit code 1\)/],
  ];
  for (const [name, deploy, reason] of cases) {
    test(name, async () => {
      const deployment = await deploy();
      const revision = await settled(deployment.id, deployment.latest_revision_id);
      assert.equal(revision.status, 'BUILD_FAILED');
      assert.match(revision.status_message, reason);
      assert.match(await logText(deployment.id, revision.id), reason);
    });
  }

  test('invalid configurations: bad JSON, no graphs, missing graph file', async () => {
    const broken = await createRepo({
      'bad/langgraph.json': '{ "graphs": ',
      'empty/langgraph.json': JSON.stringify({ graphs: {} }),
      'lost/langgraph.json': JSON.stringify({ graphs: { agent: './src/missing.ts:graph' } }),
    });
    const expectations: [string, RegExp][] = [
      ['bad/langgraph.json', /is not valid JSON/],
      ['empty/langgraph.json', /"graphs" must map at least one graph id/],
      ['lost/langgraph.json', /graph "agent" file \.\/src\/missing\.ts does not exist/],
    ];
    for (const [config, reason] of expectations) {
      const deployment = await deployFromGit({ repoUrl: broken.dir, config });
      const revision = await settled(deployment.id, deployment.latest_revision_id);
      assert.equal(revision.status, 'BUILD_FAILED', config);
      assert.match(revision.status_message, reason);
    }
  });
});

describe('running builds', () => {
  test('logs are readable while the build runs; a newer revision supersedes it and kills it', async () => {
    const deployment = await deployFromGit({ install: 'echo started slow install; sleep 60; echo never' });
    const first = deployment.latest_revision_id;
    await eventually(async () => {
      const revision = (await server.api('GET', `/v2/deployments/${deployment.id}/revisions/${first}`)).body;
      return revision.status === 'BUILDING' && /started slow install/.test(await logText(deployment.id, first)) ? true : undefined;
    }, 30_000, 'build output while BUILDING');

    const patched = await server.api('PATCH', `/v2/deployments/${deployment.id}`, { body: { source_config: { install_command: 'echo quick' }, source_revision_config: { repo_ref: 'main' } } });
    const second = patched.body.latest_revision_id;
    const superseded = await settled(deployment.id, first);
    assert.equal(superseded.status, 'SKIPPED');
    await eventually(async () => (/Build stopped: revision is SKIPPED/.test(await logText(deployment.id, first)) ? true : undefined), 15_000, 'build stopped');
    assert.doesNotMatch(await logText(deployment.id, first), /^never$/m, 'the killed command never finished');
    const next = await settled(deployment.id, second);
    assert.equal(next.status, 'AWAITING_DEPLOY', next.status_message);
  });

  test('interrupting a running build kills it', async () => {
    const deployment = await deployFromGit({ install: 'sleep 60' });
    const id = deployment.latest_revision_id;
    await eventually(async () => ((await server.api('GET', `/v2/deployments/${deployment.id}/revisions/${id}`)).body.status === 'BUILDING' ? true : undefined));
    const interrupted = await server.api('POST', `/v2/deployments/${deployment.id}/revisions/${id}/interrupt`);
    assert.equal(interrupted.body.status, 'INTERRUPTED');
    await eventually(async () => (/Build stopped: revision is INTERRUPTED/.test(await logText(deployment.id, id)) ? true : undefined), 15_000, 'build stopped');
  });
});
