// Kill the server (SIGKILL) in the middle of a build, start it again on the same storage: the pipeline
// continues and the revision ends cleanly instead of staying BUILDING forever.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { apiClient, eventually, testEnv, type ApiClient } from '../helpers/berth.ts';
import { dropSchema, ENGINE, uniqueSchema } from '../helpers/engine.ts';
import { AGENT_PROJECT, createRepo } from '../helpers/git-repo.ts';

interface ServerProcess {
  child: ChildProcess;
  api: ApiClient;
}

async function startServerProcess(env: Record<string, string>, apiKey: string): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['src/cli.ts', 'serve'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${output}`)), 60_000);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
  return { child, api: apiClient(url, apiKey) };
}

test('a build killed with its server is retried by the next server and finishes', { timeout: 180_000 }, async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'berth-restart-'));
  const schema = uniqueSchema();
  const apiKey = `test_${randomBytes(12).toString('hex')}`;
  const env = testEnv({ dataDir, schema, apiKey, env: { BERTH_JOB_HEARTBEAT_SECONDS: '10' } });
  const marker = path.join(dataDir, 'first-attempt-started');
  const repo = await createRepo(AGENT_PROJECT);
  let first: ServerProcess | undefined;
  let second: ServerProcess | undefined;
  try {
    first = await startServerProcess(env, apiKey);
    const created = await first.api('POST', '/v2/deployments', {
      body: {
        name: 'survivor', source: 'git_hosting', secrets: [],
        source_config: { repo_url: repo.dir, install_command: `if [ -f ${marker} ]; then echo second attempt; else touch ${marker}; echo first attempt; sleep 300; fi` },
        source_revision_config: { repo_ref: 'main', graph_config_path: 'langgraph.json' },
      },
    });
    assert.equal(created.status, 201);
    const { id, latest_revision_id: revisionId } = created.body;
    const revisionPath = `/v2/deployments/${id}/revisions/${revisionId}`;
    const logs = async (api: ApiClient) => ((await api('GET', `${revisionPath}/logs?limit=1000`)).body.logs as { message: string }[]).map((line) => line.message).join('\n');
    await eventually(async () => ((await first!.api('GET', revisionPath)).body.status === 'BUILDING' && /^first attempt$/m.test(await logs(first!.api)) ? true : undefined), 60_000, 'first build attempt');

    first.child.kill('SIGKILL');
    await new Promise((resolve) => first!.child.once('exit', resolve));

    second = await startServerProcess(env, apiKey);
    assert.equal((await second.api('GET', revisionPath)).body.status, 'BUILDING', 'the state survived the crash');
    const done = await eventually(async () => {
      const revision = (await second!.api('GET', revisionPath)).body;
      return revision.status === 'AWAITING_DEPLOY' || revision.status.endsWith('FAILED') ? revision : undefined;
    }, 120_000, 'the build to be retried');
    assert.equal(done.status, 'AWAITING_DEPLOY', done.status_message);
    assert.equal(done.source_revision_config.repo_commit_sha, repo.commit);
    const text = await logs(second.api);
    assert.match(text, /building again from the start/);
    assert.match(text, /^second attempt$/m);
    assert.equal(text.match(/^first attempt$/gm)?.length, 1, 'the log of the first attempt is kept, and the command ran once more');
  } finally {
    first?.child.kill('SIGKILL');
    if (second) {
      second.child.kill('SIGTERM');
      await new Promise((resolve) => second!.child.once('exit', resolve));
    }
    if (ENGINE === 'postgres') await dropSchema(schema);
    await rm(dataDir, { recursive: true, force: true });
    await rm(repo.dir, { recursive: true, force: true });
  }
});
