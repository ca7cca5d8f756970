// FastAPI reports malformed JSON with Python's `json` module error: the message and the character
// position where Python's decoder stopped. V8's JSON.parse messages differ, so when parsing fails Berth
// re-scans the text with this small decoder that fails where, and how, Python's does.

export interface JsonSyntaxProblem {
  pos: number;
  msg: string;
}

class Failure extends Error {
  readonly pos: number;
  readonly problem: string;
  constructor(pos: number, problem: string) {
    super(problem);
    this.pos = pos;
    this.problem = problem;
  }
}

const WS = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/;
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

function skipWs(text: string, pos: number): number {
  while (pos < text.length && WS.has(text[pos]!)) pos++;
  return pos;
}

function scanString(text: string, start: number): number {
  let pos = start + 1;
  for (;;) {
    if (pos >= text.length) throw new Failure(start, 'Unterminated string starting at');
    const c = text[pos]!;
    if (c === '"') return pos + 1;
    if (c === '\\') {
      const next = text[pos + 1];
      if (next === undefined) throw new Failure(start, 'Unterminated string starting at');
      if (next === 'u') {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(pos + 2, pos + 6))) throw new Failure(pos, 'Invalid \\uXXXX escape');
        pos += 6;
        continue;
      }
      if (!ESCAPES.has(next)) throw new Failure(pos, 'Invalid \\escape');
      pos += 2;
      continue;
    }
    if (c.charCodeAt(0) < 0x20) throw new Failure(pos, 'Invalid control character at');
    pos++;
  }
}

function scanValue(text: string, pos: number, depth: number): number {
  if (depth > 1000) throw new Failure(pos, 'Expecting value');
  const c = text[pos];
  if (c === '"') return scanString(text, pos);
  if (c === '{') return scanObject(text, pos, depth);
  if (c === '[') return scanArray(text, pos, depth);
  for (const word of ['null', 'true', 'false', 'NaN', 'Infinity', '-Infinity']) {
    if (text.startsWith(word, pos)) return pos + word.length;
  }
  const match = NUMBER.exec(text.slice(pos, pos + 400));
  if (match) return pos + match[0].length;
  throw new Failure(pos, 'Expecting value');
}

function scanObject(text: string, start: number, depth: number): number {
  let pos = skipWs(text, start + 1);
  if (text[pos] === '}') return pos + 1;
  for (;;) {
    if (text[pos] !== '"') throw new Failure(pos, 'Expecting property name enclosed in double quotes');
    pos = skipWs(text, scanString(text, pos));
    if (text[pos] !== ':') throw new Failure(pos, "Expecting ':' delimiter");
    pos = scanValue(text, skipWs(text, pos + 1), depth + 1);
    pos = skipWs(text, pos);
    if (text[pos] === '}') return pos + 1;
    if (text[pos] !== ',') throw new Failure(pos, "Expecting ',' delimiter");
    pos = skipWs(text, pos + 1);
  }
}

function scanArray(text: string, start: number, depth: number): number {
  let pos = skipWs(text, start + 1);
  if (text[pos] === ']') return pos + 1;
  for (;;) {
    pos = skipWs(text, scanValue(text, pos, depth + 1));
    if (text[pos] === ']') return pos + 1;
    if (text[pos] !== ',') throw new Failure(pos, "Expecting ',' delimiter");
    pos = skipWs(text, pos + 1);
  }
}

/** Where and why Python's json.loads would reject `text`; null if it would accept it. */
export function pythonJsonError(text: string): JsonSyntaxProblem | null {
  try {
    const end = skipWs(text, scanValue(text, skipWs(text, 0), 0));
    if (end !== text.length) return { pos: end, msg: 'Extra data' };
    return null;
  } catch (error) {
    if (error instanceof Failure) return { pos: error.pos, msg: error.problem };
    throw error;
  }
}
