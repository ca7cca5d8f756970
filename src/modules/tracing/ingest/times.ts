// Run timestamps arrive as ISO strings (with Z, an offset or none) or epoch milliseconds; Berth stores
// microseconds, so strings are rewritten without passing through a millisecond Date.

const FAST = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3}|\d{6})Z$/;
const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/** Canonical `YYYY-MM-DDTHH:MM:SS.ffffff+00:00`, or undefined when the value is not a time. */
export function normalizeTime(value: unknown): string | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0 || value > 253402300799999) return undefined;
    const micros = Math.round(value * 1000);
    const millis = Math.floor(micros / 1000);
    const base = new Date(millis).toISOString().slice(0, 19);
    return `${base}.${String(micros - millis * 1000 + (millis % 1000) * 1000).padStart(6, '0')}+00:00`;
  }
  if (typeof value !== 'string') return undefined;
  // Fast path for what the SDK sends: a UTC time with milliseconds or microseconds.
  const fast = FAST.exec(value);
  if (fast && Number(fast[1]) >= 1 && Number(fast[3]) <= 28 && Number(fast[4]) <= 23 && Number(fast[5]) <= 59 && Number(fast[6]) <= 59 && Number(fast[2]) >= 1 && Number(fast[2]) <= 12 && Number(fast[3]) >= 1) {
    return `${value.slice(0, 19)}.${fast[7]!.padEnd(6, '0')}+00:00`;
  }
  const match = ISO.exec(value.trim());
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s = '00', fraction = '', zone = 'Z'] = match;
  const offset = zone === 'Z' || zone === 'z' ? 'Z' : zone.length === 3 ? `${zone}:00` : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  // PostgreSQL has no year 0; hours past 23 would roll over into the next day.
  if (Number(y) < 1 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}${offset}`);
  if (Number.isNaN(date.getTime())) return undefined;
  // Date accepts 2024-02-31 by rolling over; a calendar-invalid day is not a time.
  const local = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (local.getUTCDate() !== Number(d) || local.getUTCMonth() !== Number(mo) - 1) return undefined;
  return `${date.toISOString().slice(0, 19)}.${fraction.slice(0, 6).padEnd(6, '0')}+00:00`;
}

/** The dotted_order time stamp `YYYYMMDDTHHMMSSffffff` as a canonical time. */
export function dottedTime(stamp: string): string | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{6})$/.exec(stamp);
  if (!m) return undefined;
  return normalizeTime(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z`);
}

/** A canonical time as a dotted_order stamp. */
export function toDottedStamp(canonical: string): string {
  return canonical.slice(0, 26).replace(/[-:.]/g, '');
}
