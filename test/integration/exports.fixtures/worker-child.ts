// A Berth worker process for the SIGKILL test: reads runs slowly and, once it has read a few pages, prints
// MIDWAY and reads no more, so the test can kill it in the middle of a run. Settings come from the environment (testEnv).
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
    if (scans === midwayAfter) {
      // Stop here for good, after the work already under way (a row group flush, a file's upload being
      // started and recorded) has settled, so the test kills the worker at a known point of the run.
      await sleep(1000);
      process.stdout.write('MIDWAY\n');
      await new Promise(() => undefined);
    }
    return page;
  },
});

await startBerth(loadConfig(process.env), { wrapExportRunSource: slow });
process.stdout.write('STARTED\n');
