// The only SQL about export destinations. Every query names the tenant.
import { sql, type Kysely } from 'kysely';
import type { Db } from '../../platform/db/index.ts';

export interface DestinationConfig {
  bucket_name: string;
  prefix: string;
  region: string | null;
  endpoint_url: string | null;
  include_bucket_in_prefix: boolean;
}

export interface DestinationRow {
  id: string;
  tenant_id: string;
  display_name: string;
  destination_type: 's3';
  config: DestinationConfig;
  credentials_sealed: string | null;
  credentials_keys: string[];
  created_at: string;
  updated_at: string;
}

export class DestinationsRepo {
  readonly #db: Kysely<any>;

  constructor(db: Db) {
    this.#db = db.kysely;
  }

  async insert(row: Omit<DestinationRow, 'created_at' | 'updated_at'>): Promise<DestinationRow> {
    return await this.#db.insertInto('bulk_export_destinations')
      .values({ ...row, config: JSON.stringify(row.config), credentials_keys: sql`${row.credentials_keys}::text[]` })
      .returningAll()
      .executeTakeFirstOrThrow() as DestinationRow;
  }

  /** Pass the transaction when inside one: the embedded engine has a single connection. */
  async get(tenantId: string, id: string, trx?: Kysely<any>): Promise<DestinationRow | undefined> {
    return await (trx ?? this.#db).selectFrom('bulk_export_destinations').selectAll()
      .where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst() as DestinationRow | undefined;
  }

  async list(tenantId: string): Promise<DestinationRow[]> {
    return await this.#db.selectFrom('bulk_export_destinations').selectAll()
      .where('tenant_id', '=', tenantId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute() as DestinationRow[];
  }

  async update(tenantId: string, id: string, changes: { display_name?: string; credentials_sealed?: string | null; credentials_keys?: string[] }): Promise<DestinationRow | undefined> {
    const values: Record<string, unknown> = { updated_at: sql`now()` };
    if (changes.display_name !== undefined) values.display_name = changes.display_name;
    if (changes.credentials_sealed !== undefined) values.credentials_sealed = changes.credentials_sealed;
    if (changes.credentials_keys !== undefined) values.credentials_keys = sql`${changes.credentials_keys}::text[]`;
    return await this.#db.updateTable('bulk_export_destinations').set(values)
      .where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirst() as DestinationRow | undefined;
  }
}
