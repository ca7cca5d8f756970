// Berth's long-term memory store (LangGraph BaseStore) on the agent server's database, with TTL.
import {
  BaseStore,
  InvalidNamespaceError,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type SearchItem,
} from '@langchain/langgraph-checkpoint';
import type { SqlExecutor } from '../../platform/db/index.ts';

export interface StoreTtlSettings {
  /** Minutes an item lives when a put does not say. */
  defaultTtlMinutes?: number | null;
  /** Reading an item pushes its expiry back. */
  refreshOnRead?: boolean;
  /** How often expired items are swept. */
  sweepIntervalMinutes?: number;
}

interface ItemRow {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface StoreItem {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

const NOT_EXPIRED = '(expires_at IS NULL OR expires_at > now())';

export function validateNamespace(namespace: string[]): void {
  if (namespace.length === 0) throw new InvalidNamespaceError('Namespace cannot be empty.');
  for (const label of namespace) {
    if (typeof label !== 'string') throw new InvalidNamespaceError(`Namespace labels must be strings, got ${typeof label}.`);
    if (label.includes('.')) throw new InvalidNamespaceError(`Namespace labels cannot contain periods ('.'): ${JSON.stringify(label)}.`);
    if (label === '') throw new InvalidNamespaceError('Namespace labels cannot be empty strings.');
  }
  if (namespace[0] === 'langgraph') throw new InvalidNamespaceError(`Root label for namespace cannot be "langgraph".`);
}

export class DbStore extends BaseStore {
  readonly #db: SqlExecutor;
  readonly #ttl: StoreTtlSettings;

  constructor(db: SqlExecutor, ttl: StoreTtlSettings = {}) {
    super();
    this.#db = db;
    this.#ttl = ttl;
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    for (const op of operations) {
      if ('namespacePrefix' in op) {
        results.push(await this.searchItems(op.namespacePrefix, { filter: op.filter, limit: op.limit, offset: op.offset }).then((items) => items.map(toItem)));
      } else if ('value' in op) {
        if (op.value === null) await this.deleteItem(op.namespace, op.key);
        else await this.putItem(op.namespace, op.key, op.value);
        results.push(undefined);
      } else if ('key' in op) {
        const item = await this.getItem(op.namespace, op.key);
        results.push(item ? toItem(item) : null);
      } else {
        results.push(await this.namespaces(op as ListNamespacesOperation));
      }
    }
    return results as OperationResults<Op>;
  }

  async putItem(namespace: string[], key: string, value: Record<string, unknown>, ttlMinutes?: number | null): Promise<void> {
    validateNamespace(namespace);
    const ttl = ttlMinutes === undefined ? (this.#ttl.defaultTtlMinutes ?? null) : ttlMinutes;
    await this.#db.query(
      `INSERT INTO agent_store_items (prefix, key, namespace, value, ttl_minutes, expires_at)
       VALUES ($1, $2, $3::text[], $4::jsonb, $5::float8,
               CASE WHEN $5::float8 IS NULL THEN NULL ELSE now() + $5::float8 * interval '1 minute' END)
       ON CONFLICT (prefix, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now(),
         ttl_minutes = EXCLUDED.ttl_minutes, expires_at = EXCLUDED.expires_at`,
      [namespace.join('.'), key, namespace, JSON.stringify(value), ttl],
    );
  }

  async getItem(namespace: string[], key: string, refreshTtl?: boolean): Promise<StoreItem | undefined> {
    const refresh = refreshTtl ?? this.#ttl.refreshOnRead ?? true;
    const rows = refresh
      ? await this.#db.query<ItemRow>(
        `UPDATE agent_store_items SET expires_at = CASE WHEN ttl_minutes IS NULL THEN NULL ELSE now() + ttl_minutes * interval '1 minute' END
          WHERE prefix = $1 AND key = $2 AND ${NOT_EXPIRED}
          RETURNING namespace, key, value, created_at, updated_at`,
        [namespace.join('.'), key],
      )
      : await this.#db.query<ItemRow>(
        `SELECT namespace, key, value, created_at, updated_at FROM agent_store_items WHERE prefix = $1 AND key = $2 AND ${NOT_EXPIRED}`,
        [namespace.join('.'), key],
      );
    return rows[0];
  }

  async deleteItem(namespace: string[], key: string): Promise<void> {
    await this.#db.query(`DELETE FROM agent_store_items WHERE prefix = $1 AND key = $2`, [namespace.join('.'), key]);
  }

  async searchItems(
    prefix: string[],
    options: { filter?: Record<string, unknown>; limit?: number; offset?: number; refreshTtl?: boolean } = {},
  ): Promise<StoreItem[]> {
    const params: unknown[] = [];
    const where = [NOT_EXPIRED];
    if (prefix.length > 0) {
      params.push(prefix);
      where.push(`namespace[1:${prefix.length}] = $${params.length}::text[]`);
    }
    if (options.filter && Object.keys(options.filter).length > 0) {
      params.push(JSON.stringify(options.filter));
      where.push(`value @> $${params.length}::jsonb`);
    }
    params.push(options.limit ?? 10, options.offset ?? 0);
    const select = `SELECT prefix, key FROM agent_store_items WHERE ${where.join(' AND ')}
      ORDER BY updated_at DESC, prefix, key LIMIT $${params.length - 1} OFFSET $${params.length}`;
    const refresh = options.refreshTtl ?? this.#ttl.refreshOnRead ?? true;
    // The refresh and the read are one statement; the order is restored from the CTE.
    const rows = await this.#db.query<ItemRow & { ord: number }>(
      refresh
        ? `WITH hit AS (SELECT prefix, key, row_number() OVER () AS ord FROM (${select}) s),
             upd AS (UPDATE agent_store_items i SET expires_at = now() + i.ttl_minutes * interval '1 minute'
                      FROM hit WHERE i.prefix = hit.prefix AND i.key = hit.key AND i.ttl_minutes IS NOT NULL)
           SELECT i.namespace, i.key, i.value, i.created_at, i.updated_at, hit.ord
             FROM hit JOIN agent_store_items i ON i.prefix = hit.prefix AND i.key = hit.key ORDER BY hit.ord`
        : `WITH hit AS (SELECT prefix, key, row_number() OVER () AS ord FROM (${select}) s)
           SELECT i.namespace, i.key, i.value, i.created_at, i.updated_at, hit.ord
             FROM hit JOIN agent_store_items i ON i.prefix = hit.prefix AND i.key = hit.key ORDER BY hit.ord`,
      params,
    );
    return rows.map(({ ord: _ord, ...item }) => item);
  }

  async namespaces(op: { matchConditions?: ListNamespacesOperation['matchConditions']; maxDepth?: number; limit: number; offset: number }): Promise<string[][]> {
    const rows = await this.#db.query<{ namespace: string[] }>(
      `SELECT DISTINCT namespace FROM agent_store_items WHERE ${NOT_EXPIRED} ORDER BY namespace`,
    );
    const seen = new Set<string>();
    const out: string[][] = [];
    for (const { namespace } of rows) {
      if (!(op.matchConditions ?? []).every((condition) => matches(namespace, condition.matchType, condition.path))) continue;
      const cut = op.maxDepth !== undefined ? namespace.slice(0, op.maxDepth) : namespace;
      const id = JSON.stringify(cut);
      if (seen.has(id)) continue;
      seen.add(id);
      out.push(cut);
    }
    return out.slice(op.offset, op.offset + op.limit);
  }

  /** Deletes expired items; returns how many. */
  async sweepExpired(): Promise<number> {
    const rows = await this.#db.query(`DELETE FROM agent_store_items WHERE expires_at <= now() RETURNING 1`);
    return rows.length;
  }
}

function matches(namespace: string[], type: 'prefix' | 'suffix', path: string[]): boolean {
  if (path.length > namespace.length) return false;
  const part = type === 'prefix' ? namespace.slice(0, path.length) : namespace.slice(namespace.length - path.length);
  return path.every((label, index) => label === '*' || label === part[index]);
}

function toItem(row: StoreItem): Item & SearchItem {
  return { namespace: row.namespace, key: row.key, value: row.value, createdAt: new Date(row.created_at), updatedAt: new Date(row.updated_at) };
}
