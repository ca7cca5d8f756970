// First start on an empty database: a default organization, workspace and admin key.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { TenantStore } from './store.ts';

export interface BootstrapResult {
  organizationId: string;
  workspaceId: string;
  /** Where the admin key can be found, for the start-up message. */
  keySource: 'BERTH_API_KEY' | 'file' | 'existing';
  keyFile?: string;
  /** The generated key, shown once, only when it was generated now. */
  generatedKey?: string;
}

export const ADMIN_KEY_FILE = 'admin-api-key';

export async function bootstrapTenancy(store: TenantStore, options: { dataDir: string; apiKey: string | undefined }): Promise<BootstrapResult> {
  const existing = await store.firstOrganization();
  if (existing) {
    // A key named by the environment always works, so scripts that set BERTH_API_KEY can rely on it.
    if (options.apiKey && !(await store.keyExists(options.apiKey))) {
      await store.createApiKey({ organizationId: existing.id, workspaceId: existing.defaultWorkspaceId, role: 'admin', description: 'BERTH_API_KEY', key: options.apiKey });
    }
    return { organizationId: existing.id, workspaceId: existing.defaultWorkspaceId, keySource: options.apiKey ? 'BERTH_API_KEY' : 'existing', keyFile: path.join(options.dataDir, ADMIN_KEY_FILE) };
  }
  const organizationId = await store.createOrganization('Default');
  const workspace = await store.createWorkspace(organizationId, 'Default');
  const { key } = await store.createApiKey({
    organizationId,
    workspaceId: workspace.id,
    role: 'admin',
    description: 'admin key created on first start',
    ...(options.apiKey ? { key: options.apiKey } : {}),
  });
  if (options.apiKey) return { organizationId, workspaceId: workspace.id, keySource: 'BERTH_API_KEY' };
  await mkdir(options.dataDir, { recursive: true });
  const keyFile = path.join(options.dataDir, ADMIN_KEY_FILE);
  await writeFile(keyFile, `${key}\n`, { mode: 0o600 });
  await chmod(keyFile, 0o600);
  return { organizationId, workspaceId: workspace.id, keySource: 'file', keyFile, generatedKey: key };
}
