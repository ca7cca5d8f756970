// Microsecond-exact timestamps: Berth's wire format carries microseconds that a JavaScript Date would drop.

const ISO = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:?\d\d)?$/i;

/** Microseconds since the epoch of an ISO 8601 text (any offset; none means UTC). */
export function isoToMicros(iso: string): number {
  const match = ISO.exec(iso.trim().replace(' ', 'T'));
  if (!match) {
    const ms = Date.parse(iso);
    if (Number.isNaN(ms)) throw new RangeError(`Not a timestamp: ${iso}`);
    return ms * 1000;
  }
  const [, base, fraction = '', zone = 'Z'] = match;
  const ms = Date.parse(`${base}${zone.toUpperCase() === 'Z' ? 'Z' : zone}`);
  const micros = Number(fraction.padEnd(6, '0').slice(0, 6));
  return Math.floor(ms / 1000) * 1_000_000 + micros;
}

/** ISO text with microseconds and +00:00, Berth's wire format. */
export function microsToIso(micros: number): string {
  const ms = Math.floor(micros / 1000);
  const seconds = new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19);
  const fraction = String(micros - Math.floor(micros / 1_000_000) * 1_000_000).padStart(6, '0');
  return `${seconds}.${fraction}+00:00`;
}
