// Export destinations: creation and credential rotation both prove the bucket works before anything is stored.
import { randomUUID } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Logger } from 'pino';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import { createS3Client, validateDestination, type S3ClientTuning, type S3Credentials } from '../../platform/objectstore/index.ts';
import type { DestinationConfig, DestinationRow, DestinationsRepo } from './destinations-repo.ts';
import type { CredentialsRequest, DestinationCreateRequest, DestinationPatchRequest } from './schemas.ts';

export interface DestinationView {
  id: string;
  tenant_id: string;
  display_name: string;
  destination_type: 's3';
  config: DestinationConfig;
  credentials_keys: string[];
  created_at: string;
  updated_at: string;
}

export function destinationView(row: DestinationRow): DestinationView {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    display_name: row.display_name,
    destination_type: row.destination_type,
    config: row.config,
    credentials_keys: row.credentials_keys,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

// Validation answers a person waiting on an HTTP request: one attempt, short timeouts.
const VALIDATION_TUNING: S3ClientTuning = { maxAttempts: 1, connectionTimeoutMs: 5_000, socketTimeoutMs: 15_000 };

function trimmedOrNull(value: string | null | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
}

function credentialsOf(input: CredentialsRequest): { sealedJson: string; keys: string[] } {
  const stored: Record<string, string> = { access_key_id: input.access_key_id, secret_access_key: input.secret_access_key };
  if (input.session_token) stored.session_token = input.session_token;
  return { sealedJson: JSON.stringify(stored), keys: Object.keys(stored) };
}

function sdkCredentials(input: Record<string, string>): S3Credentials {
  return { accessKeyId: input.access_key_id!, secretAccessKey: input.secret_access_key!, sessionToken: input.session_token };
}

export class DestinationsService {
  readonly #repo: DestinationsRepo;
  readonly #secrets: SecretBox;
  readonly #logger: Logger;

  constructor(repo: DestinationsRepo, secrets: SecretBox, logger: Logger) {
    this.#repo = repo;
    this.#secrets = secrets;
    this.#logger = logger;
  }

  async create(tenantId: string, input: DestinationCreateRequest): Promise<DestinationView> {
    const endpointUrl = trimmedOrNull(input.config.endpoint_url);
    if (endpointUrl !== null && !/^https?:\/\/[^/\s]+/i.test(endpointUrl)) throw badRequest('Invalid endpoint');
    const config: DestinationConfig = {
      bucket_name: input.config.bucket_name.trim(),
      prefix: input.config.prefix ?? '',
      region: trimmedOrNull(input.config.region),
      endpoint_url: endpointUrl,
      include_bucket_in_prefix: input.config.include_bucket_in_prefix ?? false,
    };
    const credentials = input.credentials ? credentialsOf(input.credentials) : undefined;
    await this.#validate(config, input.credentials ? sdkCredentials(JSON.parse(credentials!.sealedJson)) : undefined);
    const row = await this.#repo.insert({
      id: randomUUID(),
      tenant_id: tenantId,
      display_name: input.display_name,
      destination_type: 's3',
      config,
      credentials_sealed: credentials ? this.#secrets.seal(credentials.sealedJson) : null,
      credentials_keys: credentials?.keys ?? [],
    });
    return destinationView(row);
  }

  async list(tenantId: string): Promise<DestinationView[]> {
    return (await this.#repo.list(tenantId)).map(destinationView);
  }

  async get(tenantId: string, id: string): Promise<DestinationView> {
    return destinationView(await this.#row(tenantId, id));
  }

  /** Renames and/or rotates credentials; new credentials are validated against the bucket before they are stored. */
  async patch(tenantId: string, id: string, input: DestinationPatchRequest): Promise<DestinationView> {
    const row = await this.#row(tenantId, id);
    const changes: Parameters<DestinationsRepo['update']>[2] = {};
    if (input.display_name !== undefined) changes.display_name = input.display_name;
    if (input.credentials !== undefined) {
      const credentials = input.credentials ? credentialsOf(input.credentials) : undefined;
      await this.#validate(row.config, input.credentials ? sdkCredentials(JSON.parse(credentials!.sealedJson)) : undefined);
      changes.credentials_sealed = credentials ? this.#secrets.seal(credentials.sealedJson) : null;
      changes.credentials_keys = credentials?.keys ?? [];
    }
    const updated = await this.#repo.update(tenantId, id, changes);
    if (!updated) throw notFound(`Destination ${id} not found`);
    return destinationView(updated);
  }

  /** An S3 client for an existing destination (used by the export workers). */
  clientFor(row: DestinationRow, tuning?: S3ClientTuning): S3Client {
    const credentials = row.credentials_sealed ? sdkCredentials(JSON.parse(this.#secrets.open(row.credentials_sealed))) : undefined;
    return createS3Client({ region: row.config.region ?? undefined, endpointUrl: row.config.endpoint_url ?? undefined, credentials }, tuning);
  }

  async #row(tenantId: string, id: string): Promise<DestinationRow> {
    const row = await this.#repo.get(tenantId, id);
    if (!row) throw notFound(`Destination ${id} not found`);
    return row;
  }

  async #validate(config: DestinationConfig, credentials: S3Credentials | undefined): Promise<void> {
    const client = createS3Client({ region: config.region ?? undefined, endpointUrl: config.endpoint_url ?? undefined, credentials }, VALIDATION_TUNING);
    try {
      const result = await validateDestination(client, {
        bucket: config.bucket_name, prefix: config.prefix, includeBucketInPrefix: config.include_bucket_in_prefix,
      });
      if (!result.ok) {
        this.#logger.info({ step: result.step, kind: result.kind, reason: result.message }, 'export destination validation failed');
        throw badRequest(result.detail);
      }
      if (!result.deleted) this.#logger.info({ key: result.key }, 'destination test file left in place: no delete permission');
    } finally {
      client.destroy();
    }
  }
}
