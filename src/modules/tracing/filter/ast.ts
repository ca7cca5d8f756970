/**
 * The parsed form of a filter. Every node keeps its source span (`start` inclusive, `end` exclusive, as
 * JavaScript string indexes) so later stages and UIs can point at the exact text.
 */

export interface Span {
  start: number;
  end: number;
}

export const comparators = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'has', 'search', 'in', 'like', 'exists'] as const;
export type Comparator = (typeof comparators)[number];

export const logicalFunctions = ['and', 'or', 'not'] as const;

/** A literal exactly as written. */
export type Literal =
  | (Span & { kind: 'string'; value: string })
  | (Span & { kind: 'number'; value: number; text: string })
  | (Span & { kind: 'boolean'; value: boolean })
  | (Span & { kind: 'null' })
  | (Span & { kind: 'array'; items: Literal[] });

/**
 * A literal after validation against its attribute, ready to bind: `value` is the text PostgreSQL parses
 * with the matching cast (numbers stay decimal text so large integers keep their precision).
 */
export type Scalar =
  | { type: 'text' | 'number' | 'uuid' | 'timestamp' | 'json'; value: string }
  | { type: 'boolean'; value: boolean }
  | { type: 'null' };

export type Operand = Scalar | { type: 'list'; items: Scalar[] };

export interface AndNode extends Span {
  kind: 'and';
  args: FilterNode[];
}

export interface OrNode extends Span {
  kind: 'or';
  args: FilterNode[];
}

export interface NotNode extends Span {
  kind: 'not';
  arg: FilterNode;
}

export interface ComparisonNode extends Span {
  kind: 'comparison';
  op: Comparator;
  attribute: string;
  attributeSpan: Span;
  value: Literal;
  operand: Operand;
}

/** One-argument `search("text")`: keyword search over the run's text. */
export interface SearchNode extends Span {
  kind: 'search';
  value: Literal & { kind: 'string' };
  /** Whitespace-separated words, de-duplicated; each must occur, case-insensitively. */
  terms: string[];
}

export type FilterNode = AndNode | OrNode | NotNode | ComparisonNode | SearchNode;
