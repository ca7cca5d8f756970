// Builds a git_hosting revision: fetch the repository at its ref, record the commit, check the graph
// configuration, run the install and build commands. Each step's output goes to the build log.
import { access, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { BuildLog } from './build-log.ts';
import { checkGraphConfig } from './graph-config.ts';
import { BuildFailure, runCommand } from './run-command.ts';

export interface BuildRequest {
  repoUrl: string;
  /** Branch name, full tag ref, or null for the repository's default branch. */
  repoRef: string | null;
  /** Exact commit to build (redeploying an older revision). */
  pinnedCommitSha: string | null;
  graphConfigPath: string;
  installCommand: string | null;
  buildCommand: string | null;
  workDir: string;
  timeoutMs: number;
  signal: AbortSignal;
  log: BuildLog;
  /** Called as soon as the commit is known, before the slower steps. */
  onCommit(sha: string): Promise<void>;
}

// Builds see a small, predictable environment: never the server's own secrets.
function buildEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { GIT_TERMINAL_PROMPT: '0', CI: 'true' };
  for (const name of ['PATH', 'HOME', 'LANG', 'TMPDIR', 'npm_config_cache', 'NODE_OPTIONS']) {
    if (process.env[name] !== undefined) env[name] = process.env[name];
  }
  return env;
}

const exists = (file: string) => access(file).then(() => true, () => false);

/** The install command a JS project's lockfile implies (the official images choose the same way). */
export async function detectInstallCommand(repoDir: string): Promise<string | null> {
  if (await exists(path.join(repoDir, 'yarn.lock'))) return 'yarn install --frozen-lockfile';
  if (await exists(path.join(repoDir, 'pnpm-lock.yaml'))) return 'pnpm i --frozen-lockfile';
  if (await exists(path.join(repoDir, 'package-lock.json'))) return 'npm ci';
  if (await exists(path.join(repoDir, 'bun.lockb'))) return 'bun i';
  if (await exists(path.join(repoDir, 'package.json'))) return 'npm install';
  return null;
}

function remoteUrl(repoUrl: string): string {
  // A local path is a valid git remote; make relative ones absolute so they do not depend on the work dir.
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(repoUrl) || /^[^/]+@[^:]+:/.test(repoUrl) ? repoUrl : path.resolve(repoUrl);
}

export async function buildRevision(request: BuildRequest): Promise<{ commitSha: string; configDir: string }> {
  const { log, signal } = request;
  const env = buildEnv();
  const repoDir = path.join(request.workDir, 'repo');
  await rm(request.workDir, { recursive: true, force: true });
  await mkdir(repoDir, { recursive: true });
  const git = (args: string[], step: string, logOutput = true) => runCommand('git', args, { cwd: repoDir, env, timeoutMs: request.timeoutMs, signal, log, step, logOutput });

  const ref = request.pinnedCommitSha ?? request.repoRef ?? 'HEAD';
  log.write('info', `Fetching ${request.repoUrl} at ${ref}`);
  await git(['init', '--quiet'], 'git init');
  await git(['fetch', '--quiet', '--depth', '1', remoteUrl(request.repoUrl), ref], `git fetch of ${ref}`);
  await git(['checkout', '--quiet', '--detach', 'FETCH_HEAD'], 'git checkout');
  const commitSha = (await git(['rev-parse', 'HEAD'], 'git rev-parse', false)).trim();
  log.write('info', `Checked out commit ${commitSha}`);
  await request.onCommit(commitSha);

  const summary = await checkGraphConfig(repoDir, request.graphConfigPath);
  log.write('info', `Graph configuration ${request.graphConfigPath}: graphs ${Object.keys(summary.graphs).join(', ')}`);

  const install = request.installCommand ?? (await detectInstallCommand(repoDir));
  if (install) {
    log.write('info', `Installing: ${install}`);
    await runCommand('sh', ['-c', install], { cwd: repoDir, env, timeoutMs: request.timeoutMs, signal, log, step: 'install command' });
  } else {
    log.write('info', 'No install command: no package manager files found');
  }
  if (request.buildCommand) {
    log.write('info', `Building: ${request.buildCommand}`);
    await runCommand('sh', ['-c', request.buildCommand], { cwd: summary.configDir, env, timeoutMs: request.timeoutMs, signal, log, step: 'build command' });
  }
  return { commitSha, configDir: summary.configDir };
}

export { BuildFailure };
