// Resolves the caller of every request: API key from X-Api-Key (any letter case) or a bearer token,
// and the workspace (tenant) the request acts in, from X-Tenant-Id or the key's own workspace.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { forbidden, unauthorized } from '../errors.ts';
import { uuidErrorText, canonicalUuid } from '../http/validation/uuid-error.ts';
import type { Principal, RouteScope } from './principal.ts';
import type { TenantStore } from './store.ts';
import { BoundedCache } from '../bounded-cache.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | undefined;
    /** The workspace of a workspace-scoped route; empty on other routes. */
    tenantId: string;
  }
  interface FastifyContextConfig {
    /** Who may call the route; 'workspace' when omitted. */
    scope?: RouteScope;
    /** Requires an admin key. */
    admin?: boolean;
    /** Kept for legacy `public: true` routes (health, docs). */
    public?: boolean;
    /** The JSON body may be absent. */
    bodyOptional?: boolean;
  }
}

export interface Authenticator {
  /** Forget cached keys and workspaces (after a key is revoked). */
  invalidate(): void;
}

function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  const apiKey = Array.isArray(header) ? header[0] : header;
  if (apiKey) return apiKey.trim();
  const authorization = request.headers.authorization;
  const match = authorization && /^Bearer\s+(.+)$/i.exec(authorization);
  return match ? match[1]!.trim() : undefined;
}

export function installAuthentication(app: FastifyInstance, store: TenantStore, cacheTtlMs = 2000): Authenticator {
  // Authentication runs on every request; keys and workspaces change rarely, so look-ups are cached briefly.
  const keys = new BoundedCache<Principal | undefined>({ max: 10_000, ttlMs: cacheTtlMs });
  const workspaces = new BoundedCache<string | undefined>({ max: 10_000, ttlMs: cacheTtlMs });
  app.decorateRequest('principal', undefined);
  app.decorateRequest('tenantId', '');

  async function resolveTenant(request: FastifyRequest, principal: Principal): Promise<string> {
    const header = request.headers['x-tenant-id'];
    const requested = (Array.isArray(header) ? header[0] : header)?.trim();
    if (!requested) {
      if (principal.homeWorkspaceId) return principal.homeWorkspaceId;
      throw forbidden('This API key is organization-scoped: send X-Tenant-Id with the workspace ID to use.');
    }
    if (uuidErrorText(requested) !== null) throw forbidden(`X-Tenant-Id "${requested}" is not a workspace ID.`);
    const workspaceId = canonicalUuid(requested);
    if (workspaceId === principal.homeWorkspaceId) return workspaceId;
    // Only organization-scoped keys and admin keys may act in another workspace of their organization.
    const organization = await workspaces.getOrLoad(workspaceId, () => store.workspaceOrganization(workspaceId));
    const allowed = organization === principal.organizationId && (principal.homeWorkspaceId === null || principal.role === 'admin');
    if (!allowed) throw forbidden(`This API key may not use workspace ${workspaceId}.`);
    return workspaceId;
  }

  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    const url = request.routeOptions.url ?? '';
    if (config.public || config.scope === 'public' || url.startsWith('/docs') || request.is404) return;
    const key = presentedKey(request);
    if (!key) throw unauthorized('Missing API key: send it in the X-Api-Key header.');
    const principal = await keys.getOrLoad(key, () => store.principalForKey(key));
    if (!principal) throw unauthorized('Invalid API key.');
    request.principal = principal;
    if (config.admin && principal.role !== 'admin') throw forbidden('This operation needs an admin API key.');
    if ((config.scope ?? 'workspace') === 'workspace') request.tenantId = await resolveTenant(request, principal);
  });

  return {
    invalidate() {
      keys.clear();
      workspaces.clear();
    },
  };
}
