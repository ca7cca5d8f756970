// Statements on a hot path, prepared once per database connection: later executions skip parsing and
// planning, which costs as much as executing a short statement (~0.3–0.5 ms each). Only statements
// marked with `prepared` are named, and the names are bounded: a statement built with a varying number
// of placeholders gets one name per shape, up to MAX_PREPARED, then runs unprepared. PGlite prepares
// them too, through its wire protocol (see pglite.ts): planning costs more there (WASM).
import { createHash } from 'node:crypto';

const MAX_PREPARED = 256;
const names = new Map<string, string>();

/** Marks a statement's text as worth preparing; returns the text unchanged. */
export function prepared(text: string): string {
  if (!names.has(text) && names.size < MAX_PREPARED) {
    names.set(text, `berth_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`);
  }
  return text;
}

/** The statement name of a text marked with `prepared`, if any. */
export function preparedName(text: string): string | undefined {
  return names.get(text);
}
