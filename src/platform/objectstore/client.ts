// The one place that builds S3 clients for export destinations, so every caller gets the same settings.
import { S3Client } from '@aws-sdk/client-s3';
import type { S3ClientConfig } from '@aws-sdk/client-s3';

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface S3Destination {
  region?: string;
  /** Set for S3-compatible stores (MinIO, GCS XML API, …); omitted for AWS S3. */
  endpointUrl?: string;
  /** Omitted: the SDK's default provider chain (environment, profile, IMDS/IRSA) — self-hosted only. */
  credentials?: S3Credentials;
  /** Overrides the addressing style; by default path style exactly when `endpointUrl` is set. */
  forcePathStyle?: boolean;
}

export interface S3ClientTuning {
  /** SDK attempts per call; the export worker has its own, much longer retry budget on top. */
  maxAttempts?: number;
  connectionTimeoutMs?: number;
  /** Idle-socket timeout rather than a total one: a large part upload may take long but is never silent. */
  socketTimeoutMs?: number;
}

export const DEFAULT_S3_TUNING: Required<S3ClientTuning> = {
  maxAttempts: 3,
  connectionTimeoutMs: 10_000,
  socketTimeoutMs: 60_000,
};

// Path-style requests need no wildcard DNS, which self-hosted stores rarely have.
// The region only feeds the signature for S3-compatible stores, and us-east-1 is what they expect by default.
const DEFAULT_REGION_FOR_CUSTOM_ENDPOINTS = 'us-east-1';

export function createS3Client(dest: S3Destination, tuning: S3ClientTuning = {}): S3Client {
  const endpoint = nonEmpty(dest.endpointUrl);
  const settings = { ...DEFAULT_S3_TUNING, ...tuning };
  const config: S3ClientConfig = {
    region: nonEmpty(dest.region) ?? (endpoint ? DEFAULT_REGION_FOR_CUSTOM_ENDPOINTS : undefined),
    forcePathStyle: dest.forcePathStyle ?? endpoint !== undefined,
    // S3-compatible stores mishandle the SDK's default checksum trailers (aws-chunked bodies); send checksums
    // only where an operation requires them.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: settings.maxAttempts,
    requestHandler: {
      connectionTimeout: settings.connectionTimeoutMs,
      socketTimeout: settings.socketTimeoutMs,
    },
  };
  if (endpoint) config.endpoint = endpoint;
  // Leaving `credentials` out (rather than undefined-but-present) is what makes the SDK use its default chain.
  if (dest.credentials) {
    const { accessKeyId, secretAccessKey } = dest.credentials;
    const sessionToken = nonEmpty(dest.credentials.sessionToken);
    config.credentials = sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
  }
  return new S3Client(config);
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
