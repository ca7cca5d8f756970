// Real local git repositories for pipeline tests.
import { execFileSync } from 'node:child_process';
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const GIT_IDENTITY = ['-c', 'user.email=test@berth.local', '-c', 'user.name=Berth Test', '-c', 'commit.gpgsign=false'];

export function git(dir: string, ...args: string[]): string {
  return execFileSync('git', [...GIT_IDENTITY, ...args], { cwd: dir, encoding: 'utf8' }).trim();
}

/** Creates a repository with the given files committed on branch main; returns its path and commit. */
export async function createRepo(files: Record<string, string>): Promise<{ dir: string; commit: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'berth-repo-'));
  git(dir, 'init', '--quiet', '--initial-branch=main');
  const commit = await commitFiles(dir, files, 'initial');
  return { dir, commit };
}

export async function commitFiles(dir: string, files: Record<string, string>, message: string): Promise<string> {
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), content);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '--quiet', '-m', message);
  return git(dir, 'rev-parse', 'HEAD');
}

/** A minimal valid agent project: a graph configuration naming one graph file. */
export const AGENT_PROJECT: Record<string, string> = {
  'langgraph.json': JSON.stringify({ node_version: '20', graphs: { agent: './src/agent.ts:graph' }, env: {}, dependencies: ['.'] }, null, 2),
  'src/agent.ts': 'export const graph = {};\n',
};
