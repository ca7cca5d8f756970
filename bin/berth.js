#!/usr/bin/env node
// Entry point of the `berth` command. Node 24 runs the TypeScript sources directly.
import { main } from '../src/cli.ts';
import { ConfigError } from '../src/config.ts';

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(`berth: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
