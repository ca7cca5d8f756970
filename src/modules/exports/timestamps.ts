// Microsecond-exact timestamps: Berth's wire format carries microseconds that a JavaScript Date would drop.

const ISO = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:?\d\d)?$/i;

/** Microseconds since the epoch of an ISO 8601 text (any offset; none means UTC). */
export function isoToMicros(iso: string): number {
  // Fast path for the database's own format, "YYYY-MM-DDTHH:MM:SS.ffffff+00:00": three per exported row.
  if (iso.length === 32 && iso.endsWith('+00:00') && iso.charCodeAt(19) === 46) {
    const seconds = Date.UTC(
      num(iso, 0, 4), num(iso, 5, 7) - 1, num(iso, 8, 10), num(iso, 11, 13), num(iso, 14, 16), num(iso, 17, 19),
    ) / 1000;
    const micros = num(iso, 20, 26);
    if (!Number.isNaN(seconds) && !Number.isNaN(micros)) return seconds * 1_000_000 + micros;
  }
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

function num(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return Number.NaN;
    value = value * 10 + digit;
  }
  return value;
}
