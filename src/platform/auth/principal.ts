export type KeyRole = 'admin' | 'member';

/** Who is calling: resolved from the API key (or bearer token) of the request. */
export interface Principal {
  keyId: string;
  organizationId: string;
  /** The key's own workspace; null for an organization-scoped key. */
  homeWorkspaceId: string | null;
  role: KeyRole;
}

/** How much of the platform a route needs to know about the caller. */
export type RouteScope = 'public' | 'organization' | 'workspace';
