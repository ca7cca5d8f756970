/** The filter language of run queries and bulk exports: parse once into a tree, compile to parameterized SQL. */
export { parseFilter, isBlankFilter, MAX_FILTER_LENGTH, MAX_FILTER_DEPTH } from './parser.ts';
export { compileFilter } from './compile.ts';
export type { CompileOptions } from './compile.ts';
export { FilterError } from './errors.ts';
export { attributeNames } from './attributes.ts';
export { comparators } from './ast.ts';
export type {
  AndNode,
  Comparator,
  ComparisonNode,
  FilterNode,
  Literal,
  NotNode,
  Operand,
  OrNode,
  Scalar,
  SearchNode,
  Span,
} from './ast.ts';
