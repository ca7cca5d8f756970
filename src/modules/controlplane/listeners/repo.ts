// The only SQL of listeners. Every query names the tenant: one workspace never sees another's listeners.
import { sql, type Generated, type Kysely } from 'kysely';
import type { Db } from '../../../platform/db/index.ts';
import type { ListenerComputeConfig } from '../schemas.ts';

export interface ListenerRow {
  id: string;
  tenant_id: string;
  compute_type: 'k8s';
  compute_id: string;
  compute_config: ListenerComputeConfig;
  version: string | null;
  created_at: string;
  updated_at: string;
}

interface Tables {
  listeners: Omit<ListenerRow, 'created_at' | 'updated_at'> & { created_at: Generated<string>; updated_at: Generated<string> };
}

export class ListenerRepo {
  readonly #db: Kysely<Tables>;

  constructor(db: Db) {
    this.#db = db.kysely as Kysely<Tables>;
  }

  /** Undefined when the workspace already has a listener for this compute id. */
  async insert(row: Omit<ListenerRow, 'created_at' | 'updated_at'>): Promise<ListenerRow | undefined> {
    return this.#db.insertInto('listeners')
      .values({ ...row, compute_config: JSON.stringify(row.compute_config) as any })
      .onConflict((conflict) => conflict.columns(['tenant_id', 'compute_id']).doNothing())
      .returningAll()
      .executeTakeFirst() as Promise<ListenerRow | undefined>;
  }

  async get(tenantId: string, id: string): Promise<ListenerRow | undefined> {
    return this.#db.selectFrom('listeners').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst() as Promise<ListenerRow | undefined>;
  }

  async list(tenantId: string, limit: number, offset: number): Promise<ListenerRow[]> {
    return this.#db.selectFrom('listeners').selectAll().where('tenant_id', '=', tenantId)
      .orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute() as Promise<ListenerRow[]>;
  }

  /** The updated listener; undefined when the tenant has no such listener. */
  async update(tenantId: string, id: string, changes: Partial<Pick<ListenerRow, 'version' | 'compute_config'>>): Promise<ListenerRow | undefined> {
    const values: Record<string, unknown> = { ...changes, updated_at: sql`now()` };
    if (changes.compute_config) values.compute_config = JSON.stringify(changes.compute_config);
    return this.#db.updateTable('listeners').set(values as any).where('tenant_id', '=', tenantId).where('id', '=', id)
      .returningAll().executeTakeFirst() as Promise<ListenerRow | undefined>;
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const result = await this.#db.deleteFrom('listeners').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
