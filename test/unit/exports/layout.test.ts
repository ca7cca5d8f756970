import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dayPartitions, fileName, partitionPrefix } from '../../../src/modules/exports/layout.ts';
import { isoToMicros, microsToIso } from '../../../src/modules/exports/timestamps.ts';

describe('dayPartitions', () => {
  test('one partition per UTC day touched; inner bounds are midnights, outer ones exact', () => {
    const parts = dayPartitions('2026-01-30T10:00:00.000001+00:00', '2026-02-01T00:00:00.5+00:00');
    assert.deepEqual(parts.map((part) => [part.startTime, part.endTime, part.year, part.month, part.day]), [
      ['2026-01-30T10:00:00.000001+00:00', '2026-01-31T00:00:00.000000+00:00', '2026', '01', '30'],
      ['2026-01-31T00:00:00.000000+00:00', '2026-02-01T00:00:00.000000+00:00', '2026', '01', '31'],
      ['2026-02-01T00:00:00.000000+00:00', '2026-02-01T00:00:00.500000+00:00', '2026', '02', '01'],
    ]);
  });

  test('an end exactly at midnight does not touch the next day (end is exclusive)', () => {
    const parts = dayPartitions('2026-03-01T00:00:00+00:00', '2026-03-03T00:00:00+00:00');
    assert.deepEqual(parts.map((part) => part.day), ['01', '02']);
  });

  test('a range of one microsecond is one partition; offsets are converted to UTC', () => {
    assert.equal(dayPartitions('2026-03-01T00:00:00Z', '2026-03-01T00:00:00.000001Z').length, 1);
    const parts = dayPartitions('2026-03-01T23:30:00-02:00', '2026-03-02T03:00:00+00:00');
    assert.deepEqual(parts.map((part) => [part.startTime, part.day]), [['2026-03-02T01:30:00.000000+00:00', '02']]);
  });
});

describe('timestamps', () => {
  test('microseconds survive a round trip through any offset', () => {
    assert.equal(microsToIso(isoToMicros('2026-01-02T03:04:05.123456+00:00')), '2026-01-02T03:04:05.123456+00:00');
    assert.equal(microsToIso(isoToMicros('2026-01-02 03:04:05.1-01:30')), '2026-01-02T04:34:05.100000+00:00');
    assert.equal(isoToMicros('1970-01-01T00:00:01Z'), 1_000_000);
  });
});

describe('object layout', () => {
  const where = { exportId: 'e1', tenantId: 't1', sessionId: 's1' };
  const [partition] = dayPartitions('2026-04-05T00:00:00Z', '2026-04-06T00:00:00Z');

  test('default format: runs/ folder, zero-padded month and day, stray slashes in the prefix removed', () => {
    assert.equal(
      partitionPrefix({ bucket: 'b', prefix: '/team//exports/' }, { ...where, formatVersion: 'v1' }, partition!),
      'team/exports/export_id=e1/tenant_id=t1/session_id=s1/runs/year=2026/month=04/day=05',
    );
  });

  test('v2_beta is Hive-compliant (resource=runs); include_bucket_in_prefix puts the bucket first', () => {
    assert.equal(
      partitionPrefix({ bucket: 'b', prefix: '', includeBucketInPrefix: true }, { ...where, formatVersion: 'v2_beta' }, partition!),
      'b/export_id=e1/tenant_id=t1/session_id=s1/resource=runs/year=2026/month=04/day=05',
    );
  });

  test('files are numbered per run', () => {
    assert.equal(fileName('r1', 0), 'r1-00000.parquet');
    assert.equal(fileName('r1', 123), 'r1-00123.parquet');
  });
});

describe('RowSizeEstimate', async () => {
  const { RowSizeEstimate } = await import('../../../src/modules/exports/worker/row-size.ts');

  test('asks for a small first page, then as many rows as fit in the budget', () => {
    const sizes = new RowSizeEstimate();
    assert.equal(sizes.rowsWithin(1_000_000, 5000), 100);
    sizes.observe(Array.from({ length: 100 }, () => ({ inputs: 'x'.repeat(10_000) })));
    const rows = sizes.rowsWithin(1_000_000, 5000);
    assert.ok(rows >= 95 && rows <= 100, String(rows));
    assert.equal(sizes.rowsWithin(10, 5000), 1, 'at least one row');
    const small = new RowSizeEstimate();
    small.observe([{ a: 1 }]);
    assert.equal(small.rowsWithin(1_000_000, 5000), 5000, 'capped by the row count');
  });
});
