// A Berth worker process for the SIGKILL test: reads runs slowly and prints MIDWAY once it has read a few
// pages, so the test can kill it in the middle of a run. Settings come from the environment (testEnv).
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../../src/config.ts';
import { startBerth } from '../../../src/main.ts';
import type { RunSource } from '../../../src/modules/exports/index.ts';

const midwayAfter = Number(process.env.MIDWAY_AFTER_SCANS ?? '6');
let scans = 0;
const slow = (source: RunSource): RunSource => ({
  async scan(request) {
    await sleep(40);
    const page = await source.scan(request);
    scans += 1;
    if (scans === midwayAfter) process.stdout.write('MIDWAY\n');
    return page;
  },
});

await startBerth(loadConfig(process.env), { wrapExportRunSource: slow });
process.stdout.write('STARTED\n');
