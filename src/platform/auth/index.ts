export type { Principal, RouteScope, KeyRole } from './principal.ts';
export { TenantStore, type Workspace, type ApiKeyRecord } from './store.ts';
export { installAuthentication, type Authenticator } from './authenticate.ts';
export { bootstrapTenancy, ADMIN_KEY_FILE, type BootstrapResult } from './bootstrap.ts';
export { generateApiKey, hashApiKey } from './keys.ts';
