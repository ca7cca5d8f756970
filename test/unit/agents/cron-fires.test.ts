// The run ids of cron fires: UUIDv5 of (cron, scheduled time), the same in every process.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cronFireRunId, uuidV5 } from '../../../src/modules/agents/cron-fires.ts';

describe('cron fire run ids', () => {
  test('uuidV5 matches RFC 9562 (the DNS namespace example)', () => {
    assert.equal(uuidV5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com'), '2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  test('one id per (cron, scheduled time), whatever the spelling of the time; version 5', () => {
    const cron = '0b9a3d4e-58c3-4c1f-9a52-5e0f4a1b2c3d';
    const id = cronFireRunId(cron, '2026-01-01T00:00:00.000000+00:00');
    assert.equal(cronFireRunId(cron, '2026-01-01T01:00:00+01:00'), id);
    assert.notEqual(cronFireRunId(cron, '2026-01-01T00:00:01.000000+00:00'), id);
    assert.notEqual(cronFireRunId('1b9a3d4e-58c3-4c1f-9a52-5e0f4a1b2c3d', '2026-01-01T00:00:00.000000+00:00'), id);
    assert.equal(id[14], '5');
  });
});
