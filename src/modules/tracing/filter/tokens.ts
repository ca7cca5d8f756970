import { FilterError, quoteForMessage } from './errors.ts';

export type TokenKind = 'ident' | 'string' | 'number' | '(' | ')' | '[' | ']' | ',' | 'eof' | 'invalid';

export interface Token {
  kind: TokenKind;
  start: number;
  end: number;
  /** Identifier name, decoded string value, number text, or the offending character for `invalid`. */
  text: string;
}

const PUNCTUATION = new Set(['(', ')', '[', ']', ',']);
const IDENT_START = /[A-Za-z_]/;
const IDENT_REST = /[A-Za-z0-9_]/y;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WORD_CHAR = /[A-Za-z0-9_.]/;
const SIMPLE_ESCAPES: ReadonlyMap<string, string> = new Map([
  ['"', '"'],
  ["'", "'"],
  ['\\', '\\'],
  ['/', '/'],
  ['b', '\b'],
  ['f', '\f'],
  ['n', '\n'],
  ['r', '\r'],
  ['t', '\t'],
]);
const ESCAPES_EXPECTED = String.raw`one of \" \' \\ \/ \b \f \n \r \t or \uXXXX`;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// PostgreSQL rejects these exponents or loses them; far beyond any token count or cost anyway.
const MAX_EXPONENT = 400;

/**
 * On-demand tokenizer. Tokens are produced as the parser asks for them, so the first problem reported is the
 * leftmost one. Characters that cannot start a token come back as `invalid` tokens, letting the parser say
 * what it expected there; malformed strings and numbers throw directly because only the lexer knows why.
 */
export class Lexer {
  readonly text: string;
  private pos = 0;
  private lookahead: Token | undefined;

  constructor(text: string) {
    this.text = text;
  }

  peek(): Token {
    this.lookahead ??= this.scan();
    return this.lookahead;
  }

  next(): Token {
    const token = this.peek();
    this.lookahead = undefined;
    return token;
  }

  private scan(): Token {
    const text = this.text;
    while (this.pos < text.length && /\s/.test(text[this.pos] ?? '')) this.pos++;
    const start = this.pos;
    if (start >= text.length) return { kind: 'eof', start, end: start, text: '' };
    const ch = text[start] ?? '';
    if (PUNCTUATION.has(ch)) {
      this.pos++;
      return { kind: ch as TokenKind, start, end: this.pos, text: ch };
    }
    if (ch === '"' || ch === "'") return this.scanString(ch);
    if (IDENT_START.test(ch)) {
      IDENT_REST.lastIndex = start + 1;
      let end = start + 1;
      while (IDENT_REST.test(text)) end = IDENT_REST.lastIndex;
      this.pos = end;
      return { kind: 'ident', start, end, text: text.slice(start, end) };
    }
    if (ch === '-' || (ch >= '0' && ch <= '9')) {
      NUMBER.lastIndex = start;
      if (NUMBER.test(text)) return this.finishNumber(start, NUMBER.lastIndex);
    }
    // A whole code point, so a surrogate pair is reported as the character the user typed.
    const codePoint = String.fromCodePoint(text.codePointAt(start) ?? 0);
    this.pos = start + codePoint.length;
    return { kind: 'invalid', start, end: this.pos, text: codePoint };
  }

  private finishNumber(start: number, end: number): Token {
    const text = this.text;
    const raw = text.slice(start, end);
    if (end < text.length && WORD_CHAR.test(text[end] ?? '')) {
      let wordEnd = end;
      while (wordEnd < text.length && WORD_CHAR.test(text[wordEnd] ?? '')) wordEnd++;
      const word = text.slice(start, wordEnd);
      const hint = /^\d+(\.\d+)?[a-z]+$/.test(word) ? `; durations are strings, write "${word}"` : '';
      throw new FilterError(start, `invalid number ${quoteForMessage(word)}${hint}`, 'a number such as 42, -1.5 or 2e3');
    }
    const exponent = /[eE]([+-]?\d+)$/.exec(raw);
    if (!Number.isFinite(Number(raw)) || (exponent && Math.abs(Number(exponent[1])) > MAX_EXPONENT)) {
      throw new FilterError(start, `number ${quoteForMessage(raw)} is out of range`, 'a number between -1e308 and 1e308');
    }
    this.pos = end;
    return { kind: 'number', start, end, text: raw };
  }

  private scanString(quote: string): Token {
    const text = this.text;
    const start = this.pos;
    let i = start + 1;
    let value = '';
    for (;;) {
      if (i >= text.length) {
        throw new FilterError(start, `unterminated string: the ${quote} at position ${start} is never closed`, `a closing ${quote}`);
      }
      const ch = text[i] ?? '';
      if (ch === quote) break;
      if (ch === '\0') throw new FilterError(i, 'strings cannot contain the NUL character', 'a printable character');
      if (ch !== '\\') {
        value += ch;
        i++;
        continue;
      }
      const escape = text[i + 1];
      if (escape === undefined) {
        throw new FilterError(start, `unterminated string: the ${quote} at position ${start} is never closed`, `a closing ${quote}`);
      }
      const simple = SIMPLE_ESCAPES.get(escape);
      if (simple !== undefined) {
        value += simple;
        i += 2;
        continue;
      }
      if (escape === 'u') {
        const hex = text.slice(i + 2, i + 6);
        if (!/^[0-9A-Fa-f]{4}$/.test(hex)) {
          throw new FilterError(i, 'a \\u escape needs exactly four hexadecimal digits', String.raw`\uXXXX, e.g. \u00e9`);
        }
        const code = Number.parseInt(hex, 16);
        if (code === 0) throw new FilterError(i, 'strings cannot contain the NUL character', 'a printable character');
        value += String.fromCharCode(code);
        i += 6;
        continue;
      }
      const shown = /^[!-~]$/.test(escape) ? `\\${escape}` : `\\ followed by ${quoteForMessage(escape)}`;
      const hint = escape === '%' || escape === '_' ? `; for a literal ${escape} in a like pattern write \\\\${escape}` : '';
      throw new FilterError(i, `unknown escape ${shown} in a string${hint}`, ESCAPES_EXPECTED);
    }
    if (LONE_SURROGATE.test(value)) {
      // PostgreSQL cannot store half of a UTF-16 surrogate pair; refuse it here rather than fail in SQL.
      throw new FilterError(start, 'the string contains an unpaired UTF-16 surrogate', 'valid Unicode text');
    }
    this.pos = i + 1;
    return { kind: 'string', start, end: this.pos, text: value };
  }
}

/** How a token is named after "unexpected": `')'`, `word "foo"`, `end of input`. */
export function describeToken(token: Token): string {
  switch (token.kind) {
    case 'eof':
      return 'end of input';
    case 'ident':
      return `word ${quoteForMessage(token.text)}`;
    case 'string':
      return `string ${quoteForMessage(token.text)}`;
    case 'number':
      return `number ${token.text}`;
    case 'invalid':
      return `character ${quoteForMessage(token.text)}`;
    default:
      return `'${token.text}'`;
  }
}
