// Organizations, workspaces and API keys: the only SQL about tenants.
import { randomUUID } from 'node:crypto';
import type { Generated, Kysely } from 'kysely';
import type { Db } from '../db/index.ts';
import { generateApiKey, hashApiKey, keyPrefix } from './keys.ts';
import type { KeyRole, Principal } from './principal.ts';

interface Tables {
  organizations: { id: string; name: string; created_at: Generated<string> };
  workspaces: { id: string; organization_id: string; name: string; created_at: Generated<string> };
  api_keys: {
    id: string;
    key_hash: Buffer;
    key_prefix: string;
    organization_id: string;
    workspace_id: string | null;
    role: KeyRole;
    description: string;
    created_at: Generated<string>;
    revoked_at: string | null;
  };
}

export interface Workspace {
  id: string;
  organization_id: string;
  name: string;
  created_at: string;
}

export interface ApiKeyRecord {
  id: string;
  key_prefix: string;
  organization_id: string;
  workspace_id: string | null;
  role: KeyRole;
  description: string;
  created_at: string;
}

export interface NewApiKey {
  organizationId: string;
  workspaceId: string | null;
  role: KeyRole;
  description?: string;
  /** Use this key instead of generating one (BERTH_API_KEY). */
  key?: string;
}

export class TenantStore {
  readonly #db: Kysely<Tables>;

  constructor(db: Db) {
    this.#db = db.kysely as Kysely<Tables>;
  }

  async principalForKey(key: string): Promise<Principal | undefined> {
    const row = await this.#db
      .selectFrom('api_keys')
      .select(['id', 'organization_id', 'workspace_id', 'role'])
      .where('key_hash', '=', hashApiKey(key))
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (!row) return undefined;
    return { keyId: row.id, organizationId: row.organization_id, homeWorkspaceId: row.workspace_id, role: row.role };
  }

  async workspaceOrganization(workspaceId: string): Promise<string | undefined> {
    const row = await this.#db.selectFrom('workspaces').select('organization_id').where('id', '=', workspaceId).executeTakeFirst();
    return row?.organization_id;
  }

  async firstOrganization(): Promise<{ id: string; defaultWorkspaceId: string } | undefined> {
    const row = await this.#db
      .selectFrom('organizations as o')
      .innerJoin('workspaces as w', 'w.organization_id', 'o.id')
      .select(['o.id as id', 'w.id as workspace_id'])
      .orderBy('o.created_at')
      .orderBy('w.created_at')
      .limit(1)
      .executeTakeFirst();
    return row && { id: row.id, defaultWorkspaceId: row.workspace_id };
  }

  async createOrganization(name: string): Promise<string> {
    const id = randomUUID();
    await this.#db.insertInto('organizations').values({ id, name }).execute();
    return id;
  }

  async createWorkspace(organizationId: string, name: string): Promise<Workspace> {
    return this.#db
      .insertInto('workspaces')
      .values({ id: randomUUID(), organization_id: organizationId, name })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async listWorkspaces(organizationId: string): Promise<Workspace[]> {
    return this.#db.selectFrom('workspaces').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').execute();
  }

  async createApiKey(input: NewApiKey): Promise<{ key: string; record: ApiKeyRecord }> {
    const key = input.key ?? generateApiKey();
    const record = await this.#db
      .insertInto('api_keys')
      .values({
        id: randomUUID(),
        key_hash: hashApiKey(key),
        key_prefix: keyPrefix(key),
        organization_id: input.organizationId,
        workspace_id: input.workspaceId,
        role: input.role,
        description: input.description ?? '',
      })
      .returning(['id', 'key_prefix', 'organization_id', 'workspace_id', 'role', 'description', 'created_at'])
      .executeTakeFirstOrThrow();
    return { key, record };
  }

  async keyExists(key: string): Promise<boolean> {
    const row = await this.#db.selectFrom('api_keys').select('id').where('key_hash', '=', hashApiKey(key)).executeTakeFirst();
    return row !== undefined;
  }

  async listApiKeys(organizationId: string): Promise<ApiKeyRecord[]> {
    return this.#db
      .selectFrom('api_keys')
      .select(['id', 'key_prefix', 'organization_id', 'workspace_id', 'role', 'description', 'created_at'])
      .where('organization_id', '=', organizationId)
      .where('revoked_at', 'is', null)
      .orderBy('created_at')
      .execute();
  }

  /** Returns false when no live key of that organization has this id. */
  async revokeApiKey(organizationId: string, keyId: string): Promise<boolean> {
    const result = await this.#db
      .updateTable('api_keys')
      .set({ revoked_at: new Date().toISOString() })
      .where('id', '=', keyId)
      .where('organization_id', '=', organizationId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}
