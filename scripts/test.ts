// `npm test`: typecheck, unit tests, then the integration tests on PGlite and, when TEST_DATABASE_URL
// is set, again on PostgreSQL. Exits non-zero on the first failing stage.
import { spawnSync } from 'node:child_process';
import { globSync } from 'node:fs';

const node = process.execPath;
const concurrency = process.env.BERTH_TEST_CONCURRENCY ?? '2';

function run(label: string, args: string[], env: Record<string, string> = {}): void {
  process.stdout.write(`\n=== ${label} ===\n`);
  const result = spawnSync(args[0]!, args.slice(1), { stdio: 'inherit', env: { ...process.env, ...env } });
  if (result.status !== 0) {
    process.stdout.write(`\n${label} failed\n`);
    process.exit(result.status ?? 1);
  }
}

const only = process.argv.slice(2);
const files = (pattern: string) => globSync(pattern).sort().filter((file) => only.length === 0 || only.some((part) => file.includes(part)));
const reporter = process.env.CI ? ['--test-reporter=spec'] : [];

if (only.length === 0) run('typecheck', [node, 'node_modules/typescript/bin/tsc', '--noEmit', '-p', 'tsconfig.json']);
const unit = files('test/unit/**/*.test.ts');
if (unit.length > 0) run('unit tests', [node, '--test', ...reporter, `--test-concurrency=${concurrency}`, ...unit]);
const integration = files('test/integration/**/*.test.ts');
if (integration.length > 0) {
  run('integration tests on PGlite', [node, '--test', ...reporter, `--test-concurrency=${concurrency}`, ...integration], { BERTH_TEST_ENGINE: 'pglite' });
  if (process.env.TEST_DATABASE_URL) {
    run('integration tests on PostgreSQL', [node, '--test', ...reporter, `--test-concurrency=${concurrency}`, ...integration], { BERTH_TEST_ENGINE: 'postgres' });
  } else {
    process.stdout.write('\nTEST_DATABASE_URL is not set: integration tests on PostgreSQL skipped\n');
  }
}
