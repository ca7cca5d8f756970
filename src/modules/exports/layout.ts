// Where an export's files go, and how its time range splits into one export run per UTC day.
import { destinationKey, type DestinationLocation } from '../../platform/objectstore/index.ts';
import type { FormatVersion } from './schemas.ts';
import { isoToMicros, microsToIso } from './timestamps.ts';

export interface Partition {
  /** ISO, inclusive. */
  startTime: string;
  /** ISO, exclusive. */
  endTime: string;
  year: string;
  month: string;
  day: string;
}

const DAY_MICROS = 86_400_000_000;

/**
 * One partition per UTC day that [start, end) touches. The first and last partitions keep the caller's exact
 * bounds (microseconds included); the boundaries in between are midnights.
 */
export function dayPartitions(startIso: string, endIso: string): Partition[] {
  const start = isoToMicros(startIso);
  const end = isoToMicros(endIso);
  const partitions: Partition[] = [];
  for (let day = Math.floor(start / DAY_MICROS) * DAY_MICROS; day < end; day += DAY_MICROS) {
    const date = microsToIso(day);
    const next = day + DAY_MICROS;
    partitions.push({
      startTime: day <= start ? microsToIso(start) : date,
      endTime: next >= end ? microsToIso(end) : microsToIso(next),
      year: date.slice(0, 4),
      month: date.slice(5, 7),
      day: date.slice(8, 10),
    });
  }
  return partitions;
}

export interface ExportLocation {
  exportId: string;
  tenantId: string;
  sessionId: string;
  formatVersion: FormatVersion;
}

/** The folder of one partition: Hive style (`resource=runs`) for v2_beta, `runs` otherwise. */
export function partitionPrefix(destination: DestinationLocation, where: ExportLocation, partition: Partition): string {
  return destinationKey(
    destination,
    `export_id=${where.exportId}`,
    `tenant_id=${where.tenantId}`,
    `session_id=${where.sessionId}`,
    where.formatVersion === 'v2_beta' ? 'resource=runs' : 'runs',
    `year=${partition.year}`,
    `month=${partition.month}`,
    `day=${partition.day}`,
  );
}

/** `<export_run_id>-<nnnnn>.parquet`, numbered from 0 in the order the run writes them. */
export function fileName(runId: string, index: number): string {
  return `${runId}-${String(index).padStart(5, '0')}.parquet`;
}
