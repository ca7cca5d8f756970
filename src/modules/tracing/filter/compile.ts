import { sql } from 'kysely';
import type { RawBuilder, SqlBool } from 'kysely';
import type { Comparator, ComparisonNode, FilterNode, Operand, Scalar, SearchNode } from './ast.ts';
import { getAttribute } from './attributes.ts';
import type { AttributeSpec, EntrySource } from './attributes.ts';

export interface CompileOptions {
  /**
   * Alias of the runs table the predicate applies to: the run itself for `filter`, the trace's root run for
   * `trace_filter`, any run of the trace for `tree_filter`.
   */
  runAlias: string;
}

type Sql = RawBuilder<unknown>;
type Predicate = RawBuilder<SqlBool>;

/** Subquery aliases; a run alias equal to one of them would be shadowed inside the subquery. */
const KV_ALIAS = 'filter_kv';
const FEEDBACK_ALIAS = 'filter_fb';
const ALIAS = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

const CASTS: Readonly<Record<Exclude<Scalar['type'], 'null'>, Sql>> = {
  text: sql.raw('text'),
  number: sql.raw('numeric'),
  uuid: sql.raw('uuid'),
  timestamp: sql.raw('timestamptz'),
  json: sql.raw('jsonb'),
  boolean: sql.raw('boolean'),
};
const ORDERING: Readonly<Partial<Record<Comparator, Sql>>> = {
  gt: sql.raw('>'),
  gte: sql.raw('>='),
  lt: sql.raw('<'),
  lte: sql.raw('<='),
};

/** A run of key/value comparisons that must hold for one and the same entry (metadata pair, feedback row). */
interface EntryGroup {
  source: EntrySource;
  key?: ComparisonNode;
  values: ComparisonNode[];
}

/**
 * Compiles a parsed filter into a boolean SQL expression over the runs table aliased `runAlias`. Every value
 * is a bound parameter with an explicit cast; identifiers come only from the attribute whitelist.
 */
export function compileFilter(node: FilterNode, opts: CompileOptions): Predicate {
  const alias = opts.runAlias;
  if (!ALIAS.test(alias) || alias === KV_ALIAS || alias === FEEDBACK_ALIAS) {
    throw new TypeError(`compileFilter: runAlias must be a plain SQL identifier other than ${KV_ALIAS}/${FEEDBACK_ALIAS}, got ${JSON.stringify(alias)}`);
  }
  return new Compiler(alias).node(node);
}

class Compiler {
  private readonly alias: string;

  constructor(alias: string) {
    this.alias = alias;
  }

  node(node: FilterNode): Predicate {
    switch (node.kind) {
      case 'and':
        return this.and(node.args);
      case 'or':
        return sql<SqlBool>`(${sql.join(node.args.map((arg) => this.node(arg)), sql` OR `)})`;
      case 'not':
        // IS NOT TRUE rather than NOT, so runs where the inner test is unknown (NULL column) are included.
        return sql<SqlBool>`((${this.node(node.arg)}) IS NOT TRUE)`;
      case 'search':
        return this.fullText(node);
      case 'comparison':
        return this.comparison(node);
    }
  }

  private column(name: string): Sql {
    return sql.ref(`${this.alias}.${name}`);
  }

  /**
   * Inside one and(…), key and value comparisons of the same source describe one entry: each key comparison
   * starts an entry and value comparisons join the latest one (or the first one, if they come before it).
   */
  private and(args: readonly FilterNode[]): Predicate {
    const parts: Array<Predicate | EntryGroup> = [];
    const open = new Map<EntrySource, EntryGroup>();
    for (const arg of args) {
      const spec = arg.kind === 'comparison' ? pairableSpec(arg) : undefined;
      if (arg.kind !== 'comparison' || spec?.source === undefined) {
        parts.push(this.node(arg));
        continue;
      }
      const group = open.get(spec.source);
      if (spec.kind === 'entryKey' && group !== undefined && group.key === undefined) {
        group.key = arg;
      } else if (spec.kind === 'entryKey') {
        const fresh: EntryGroup = { source: spec.source, key: arg, values: [] };
        open.set(spec.source, fresh);
        parts.push(fresh);
      } else if (group !== undefined) {
        group.values.push(arg);
      } else {
        const fresh: EntryGroup = { source: spec.source, values: [arg] };
        open.set(spec.source, fresh);
        parts.push(fresh);
      }
    }
    const compiled = parts.map((part) => ('source' in part ? this.entryExists(part) : part));
    return sql<SqlBool>`(${sql.join(compiled, sql` AND `)})`;
  }

  private comparison(node: ComparisonNode): Predicate {
    const spec = attribute(node);
    const { op, operand } = node;
    switch (spec.kind) {
      case 'uuid':
      case 'text':
      case 'timestamp':
      case 'number':
      case 'boolean':
        return predicate(this.column(spec.column ?? spec.name), op, operand);
      case 'error': {
        const error = this.column('error');
        if (operand.type !== 'boolean' || op === 'exists') return predicate(error, op, operand);
        // eq(error, true) asks "did it fail", the same as neq(error, null).
        const failed = (op === 'eq') === operand.value;
        return failed ? sql<SqlBool>`(${error} IS NOT NULL)` : sql<SqlBool>`(${error} IS NULL)`;
      }
      case 'latency': {
        if (op === 'exists' || operand.type === 'null') return predicate(this.column('end_time'), op, operand);
        const latency = sql`extract(epoch from (${this.column('end_time')} - ${this.column('start_time')}))`;
        return predicate(latency, op, operand);
      }
      case 'tags': {
        const tags = this.column('tags');
        if (operand.type === 'list') return sql<SqlBool>`(${tags} && ARRAY[${sql.join(operand.items.map((item) => param(item)))}])`;
        return sql<SqlBool>`(${param(operand)} = ANY(${tags}))`;
      }
      case 'metadata': {
        const metadata = sql`(${this.column('extra')}->'metadata')`;
        if (operand.type === 'list') throw new TypeError('compileFilter: metadata takes a single value');
        const test = op === 'has' ? sql`${metadata} @> ${param(operand)}` : sql`${metadata} ? ${param(operand)}`;
        // A non-object metadata value must not match, and `?` on a JSON string would test string equality.
        return sql<SqlBool>`(jsonb_typeof(${metadata}) = 'object' AND ${test})`;
      }
      case 'entryKey':
      case 'entryValue':
      case 'feedbackScore':
        if (spec.kind === 'entryKey' && op === 'neq') {
          // The docs define neq(metadata_key, k) as "runs without key k", not "some other key exists".
          const without = { ...node, op: 'eq' as const };
          return sql<SqlBool>`(NOT ${this.entryExists({ source: spec.source ?? 'metadata', key: without, values: [] })})`;
        }
        return this.entryExists({ source: spec.source ?? 'metadata', values: [node] });
    }
  }

  private entryExists(group: EntryGroup): Predicate {
    const nodes = group.key === undefined ? group.values : [group.key, ...group.values];
    if (group.source === 'feedback') {
      const conditions = nodes.map((node) => {
        const isKey = attribute(node).kind === 'entryKey';
        return isKey
          ? predicate(sql.ref(`${FEEDBACK_ALIAS}.key`), node.op, node.operand)
          : // Compared as numeric: a literal like 1e-400 is valid numeric but out of range for double precision.
            predicate(sql`${sql.ref(`${FEEDBACK_ALIAS}.score`)}::numeric`, node.op, node.operand);
      });
      return sql<SqlBool>`EXISTS (SELECT 1 FROM feedback AS ${sql.raw(FEEDBACK_ALIAS)} WHERE ${sql.ref(`${FEEDBACK_ALIAS}.tenant_id`)} = ${this.column('tenant_id')} AND ${sql.ref(`${FEEDBACK_ALIAS}.run_id`)} = ${this.column('id')} AND ${sql.join(conditions, sql` AND `)})`;
    }
    const document =
      group.source === 'metadata' ? sql`(${this.column('extra')}->'metadata')` : this.column(group.source === 'inputs' ? 'inputs' : 'outputs');
    const conditions = nodes.map((node) => {
      const column = attribute(node).kind === 'entryKey' ? 'key' : 'value';
      return predicate(sql.ref(`${KV_ALIAS}.${column}`), node.op, node.operand);
    });
    // jsonb_each_text raises on non-objects; one odd row must not break every query over the project.
    const entries = sql`jsonb_each_text(CASE WHEN jsonb_typeof(${document}) = 'object' THEN ${document} ELSE '{}'::jsonb END)`;
    return sql<SqlBool>`EXISTS (SELECT 1 FROM ${entries} AS ${sql.raw(KV_ALIAS)}(key, value) WHERE ${sql.join(conditions, sql` AND `)})`;
  }

  private fullText(node: SearchNode): Predicate {
    const haystack = sql`lower(concat_ws(' ', ${this.column('name')}, ${this.column('error')}, ${this.column('inputs')}::text, ${this.column('outputs')}::text))`;
    const terms = node.terms.map((term) => sql`strpos(${haystack}, lower(${param({ type: 'text', value: term })})) > 0`);
    return sql<SqlBool>`(${sql.join(terms, sql` AND `)})`;
  }
}

function attribute(node: ComparisonNode): AttributeSpec {
  const spec = getAttribute(node.attribute);
  // Nodes come from parseFilter, which only accepts whitelisted attributes; a hand-built tree might not.
  if (spec === undefined) throw new TypeError(`compileFilter: unknown attribute ${JSON.stringify(node.attribute)}`);
  if (!spec.ops.includes(node.op)) throw new TypeError(`compileFilter: ${node.op} is not valid for ${spec.name}`);
  return spec;
}

/** The spec of a comparison that may pair with others in its and(…); neq on a key means absence and never pairs. */
function pairableSpec(node: ComparisonNode): AttributeSpec | undefined {
  const spec = attribute(node);
  if (spec.source === undefined || (spec.kind === 'entryKey' && node.op === 'neq')) return undefined;
  return spec;
}

function param(value: Scalar): Sql {
  if (value.type === 'null') return sql`NULL`;
  return sql`${value.value}::${CASTS[value.type]}`;
}

/** The comparison of one SQL expression with an operand; the shared core of every scalar attribute. */
function predicate(lhs: Sql, op: Comparator, operand: Operand): Predicate {
  if (operand.type === 'list') {
    return sql<SqlBool>`(${lhs} IN (${sql.join(operand.items.map((item) => param(item)))}))`;
  }
  if (operand.type === 'null') return op === 'eq' ? sql<SqlBool>`(${lhs} IS NULL)` : sql<SqlBool>`(${lhs} IS NOT NULL)`;
  if (op === 'exists') return operand.value === true ? sql<SqlBool>`(${lhs} IS NOT NULL)` : sql<SqlBool>`(${lhs} IS NULL)`;
  const value = param(operand);
  switch (op) {
    case 'eq':
      return sql<SqlBool>`(${lhs} = ${value})`;
    case 'neq':
      // Complement of eq: a run with no value at all is "not equal".
      return sql<SqlBool>`(${lhs} IS DISTINCT FROM ${value})`;
    case 'like':
      return sql<SqlBool>`(${lhs} LIKE ${value})`;
    case 'search':
      return sql<SqlBool>`(strpos(lower(${lhs}), lower(${value})) > 0)`;
    default: {
      const operator = ORDERING[op];
      if (operator === undefined) throw new TypeError(`compileFilter: ${op} is not a scalar comparison`);
      return sql<SqlBool>`(${lhs} ${operator} ${value})`;
    }
  }
}
