// Runs one build step as a shell command in its own process group, streaming output to the build log.
// The group is killed on timeout or when the revision stops needing the build.
import { spawn } from 'node:child_process';
import type { BuildLog } from './build-log.ts';

export class BuildFailure extends Error {}

export interface CommandOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal: AbortSignal;
  log: BuildLog;
  /** Describes the step in failure messages ("install", "git fetch"). */
  step: string;
  /** False for commands whose output is a value for the caller, not something to show (git rev-parse). */
  logOutput?: boolean;
}

export function runCommand(file: string, args: string[], options: CommandOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    if (options.signal.aborted) return reject(options.signal.reason);
    const child = spawn(file, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      options.log.write('error', `${options.step} timed out after ${Math.round(options.timeoutMs / 1000)} s`);
      killGroup();
    }, options.timeoutMs);
    const onAbort = () => killGroup();
    options.signal.addEventListener('abort', onAbort, { once: true });
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (stdout.length < 65536) stdout += chunk;
      if (options.logOutput !== false) options.log.write('info', chunk);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => options.log.write('info', chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      reject(new BuildFailure(`${options.step} could not start: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      if (options.signal.aborted) return reject(options.signal.reason);
      if (code === 0) return resolve(stdout);
      reject(new BuildFailure(`${options.step} failed (${signal ? `killed by ${signal}` : `exit code ${code}`})`));
    });
  });
}
