/**
 * The one error type of the filter language. Every problem with a filter string — syntax, unknown names,
 * value types, limits — surfaces as a FilterError, so callers can map it to a 400 without inspecting it.
 */
export class FilterError extends Error {
  /** 0-based offset (UTF-16 code units, i.e. a JavaScript string index) into the filter text. */
  readonly position: number;
  /** What would have been valid at `position`, e.g. `"','"` or `"a number"`. */
  readonly expected: string;
  /** The problem without the position prefix, for UIs that show the position themselves. */
  readonly detail: string;

  constructor(position: number, detail: string, expected: string) {
    super(`Invalid filter at position ${position}: ${detail}; expected ${expected}`);
    this.name = 'FilterError';
    this.position = position;
    this.expected = expected;
    this.detail = detail;
  }
}

/** Closest candidate within a small edit distance, to turn "unknown name" errors into "did you mean". */
export function suggest(word: string, candidates: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  const allowed = lower.length <= 4 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = allowed + 1;
  for (const candidate of candidates) {
    const d = editDistance(lower, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Edit distance counting an adjacent swap as one edit, since "nmae" for "name" is the typical typo. */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2 || a.length > 40) return Number.POSITIVE_INFINITY;
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const up = rows[i - 1] ?? [];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((up[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (up[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, (rows[i - 2]?.[j - 2] ?? 0) + 1);
      }
      row.push(d);
    }
    rows.push(row);
  }
  return rows[a.length]?.[b.length] ?? Number.POSITIVE_INFINITY;
}

/** A short, printable rendering of user text for messages: quoted, truncated, control characters escaped. */
export function quoteForMessage(text: string, max = 40): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return JSON.stringify(cut);
}
