// Cross-field rules of deployment requests that a JSON schema cannot say (source-specific fields,
// tags with build_on_push). Broken rules are 422s in pydantic's `value_error` shape, one per field.
import type { ValidationIssue } from '../../platform/http/validation/pydantic.ts';
import type { Source, SourceConfig, SourceRevisionConfigRequest } from './schemas.ts';

export function valueError(loc: (string | number)[], message: string, input: unknown): ValidationIssue {
  return { type: 'value_error', loc, msg: `Value error, ${message}`, input, ctx: { error: message } };
}

function missing(loc: (string | number)[], input: unknown): ValidationIssue {
  return { type: 'missing', loc, msg: 'Field required', input };
}

const GIT_ONLY_CONFIG = ['integration_id', 'repo_url', 'deployment_type', 'build_on_push', 'install_command', 'build_command'] as const;
const CONTAINER_ONLY_CONFIG = ['custom_url', 'listener_id', 'listener_config'] as const;
const GIT_ONLY_REVISION = ['repo_ref', 'graph_config_path'] as const;
const CONTAINER_ONLY_REVISION = ['image_uri'] as const;
const SOURCE_LABEL: Record<Source, string> = { git_hosting: 'git_hosting', external_container: 'external_container' };

const present = (value: unknown) => value !== undefined && value !== null;

/** Fields that belong to the other source kind must be absent or null. */
export function checkSourceFields(source: Source, config: SourceConfig | null | undefined, revision: SourceRevisionConfigRequest | null | undefined, issues: ValidationIssue[]): void {
  const foreignConfig: readonly string[] = source === 'git_hosting' ? CONTAINER_ONLY_CONFIG : GIT_ONLY_CONFIG;
  const foreignRevision: readonly string[] = source === 'git_hosting' ? CONTAINER_ONLY_REVISION : GIT_ONLY_REVISION;
  for (const field of foreignConfig) {
    const value = (config as Record<string, unknown> | null | undefined)?.[field];
    if (present(value)) issues.push(valueError(['body', 'source_config', field], `${field} is not applicable to source ${SOURCE_LABEL[source]}`, value));
  }
  for (const field of foreignRevision) {
    const value = (revision as Record<string, unknown> | null | undefined)?.[field];
    if (present(value)) issues.push(valueError(['body', 'source_revision_config', field], `${field} must be null for source ${SOURCE_LABEL[source]}`, value));
  }
}

/** What a new deployment of each source needs. */
export function checkRequiredOnCreate(source: Source, config: SourceConfig, revision: SourceRevisionConfigRequest, issues: ValidationIssue[]): void {
  if (source === 'git_hosting') {
    if (!present(config.repo_url)) issues.push(missing(['body', 'source_config', 'repo_url'], config));
    if (!present(revision.graph_config_path)) issues.push(missing(['body', 'source_revision_config', 'graph_config_path'], revision));
  } else if (!present(revision.image_uri)) {
    issues.push(missing(['body', 'source_revision_config', 'image_uri'], revision));
  }
}

/** Tags are immutable, so building on push to one is meaningless. */
export function checkTagRef(repoRef: string | null | undefined, buildOnPush: boolean | null | undefined, issues: ValidationIssue[]): void {
  if (repoRef?.startsWith('refs/tags/') && buildOnPush === true) {
    issues.push(valueError(['body', 'source_config', 'build_on_push'], `build_on_push cannot be enabled when repo_ref is a tag (${repoRef}); tags are immutable`, true));
  }
}

/** Secret names are environment variable names; one name, one value. */
export function checkSecretNames(secrets: { name: string }[] | null | undefined, issues: ValidationIssue[]): void {
  const seen = new Set<string>();
  secrets?.forEach((secret, index) => {
    if (seen.has(secret.name)) issues.push(valueError(['body', 'secrets', index, 'name'], `duplicate secret name ${secret.name}`, secret.name));
    seen.add(secret.name);
  });
}

export const IMMUTABLE_SOURCE_CONFIG = ['integration_id', 'repo_url', 'deployment_type', 'listener_id', 'listener_config'] as const;
