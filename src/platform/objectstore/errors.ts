// Maps whatever the S3 SDK throws onto the spec's destination error kinds, and says whether trying again can help.
// Destination validation answers with the kind's words; the export worker retries only `retryable` failures and
// fails the export at once on the others ("storage or destination errors … no automatic retry").

export type DestinationErrorKind = 'access_denied' | 'invalid_bucket' | 'invalid_key_id' | 'invalid_endpoint';
export type S3ErrorKind = DestinationErrorKind | 'transient' | 'unknown';

export interface S3ErrorClassification {
  kind: S3ErrorKind;
  /** For logs and run errors: the store's code, HTTP status and message. Never contains secrets. */
  message: string;
  retryable: boolean;
}

const DESTINATION_ERROR_DETAIL: Record<DestinationErrorKind, string> = {
  access_denied: 'Access denied',
  invalid_bucket: 'Bucket is not valid',
  invalid_key_id: 'Key ID you provided does not exist',
  invalid_endpoint: 'Invalid endpoint',
};

/** The spec's words for a destination error; transient and unknown failures get a plain sentence. */
export function destinationErrorDetail(kind: S3ErrorKind): string {
  if (kind === 'transient') return 'The destination is temporarily unavailable';
  if (kind === 'unknown') return 'The destination could not be validated';
  return DESTINATION_ERROR_DETAIL[kind];
}

// S3 error codes (the XML <Code>, which the SDK puts in `name` and `Code`).
const INVALID_KEY_ID_CODES = new Set(['InvalidAccessKeyId', 'InvalidClientTokenId']);
// A wrong secret is SignatureDoesNotMatch; the spec lists invalid credentials under "Access denied".
const ACCESS_DENIED_CODES = new Set([
  'AccessDenied',
  'SignatureDoesNotMatch',
  'InvalidToken',
  'ExpiredToken',
  'TokenRefreshRequired',
  'AllAccessDisabled',
  'AccountProblem',
  'NotSignedUp',
  'InvalidPayer',
  'InvalidSecurity',
  // Thrown by the default provider chain when no credentials are configured anywhere.
  'CredentialsProviderError',
]);
// PermanentRedirect and AuthorizationHeaderMalformed mean the bucket lives in another region than configured.
const INVALID_BUCKET_CODES = new Set([
  'NoSuchBucket',
  'InvalidBucketName',
  'PermanentRedirect',
  'AuthorizationHeaderMalformed',
  'IllegalLocationConstraintException',
  'InvalidBucketState',
]);
const TRANSIENT_CODES = new Set([
  'InternalError',
  'ServiceUnavailable',
  'SlowDown',
  'RequestTimeout',
  'RequestTimeTooSkewed',
  'Throttling',
  'ThrottlingException',
  'TooManyRequests',
  'RequestLimitExceeded',
  'BandwidthLimitExceeded',
  'OperationAborted',
  'TemporaryRedirect',
  'PriorRequestNotComplete',
  // The body was damaged on the way; sending it again fixes it.
  'XAmzContentSHA256Mismatch',
  'BadDigest',
  'IncompleteBody',
  'TimeoutError',
]);

// Node/socket error codes. Connection-level failures to reach the endpoint count as "Invalid endpoint" for
// validation, but stay retryable: once a destination has been validated they usually mean an outage.
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);
const BROKEN_CONNECTION_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNABORTED',
  'ESOCKETTIMEDOUT',
  'EAI_AGAIN',
  'ERR_STREAM_PREMATURE_CLOSE',
]);
// Something answered, but not HTTP or not with a certificate we can use: the URL points at the wrong thing.
const NOT_S3_CODES = new Set([
  'ERR_INVALID_URL',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'EPROTO',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

interface ErrorFacts {
  code: string | undefined;
  status: number | undefined;
  systemCode: string | undefined;
  message: string;
  notS3Response: boolean;
  sdkRetryable: boolean;
}

export function classifyS3Error(err: unknown): S3ErrorClassification {
  const facts = readFacts(err);
  const { code, status, systemCode } = facts;
  const message = describe(facts);
  const result = (kind: S3ErrorKind, retryable: boolean): S3ErrorClassification => ({ kind, message, retryable });

  if (code && INVALID_KEY_ID_CODES.has(code)) return result('invalid_key_id', false);
  if (code && ACCESS_DENIED_CODES.has(code)) return result('access_denied', false);
  if (code && INVALID_BUCKET_CODES.has(code)) return result('invalid_bucket', false);
  if (code && TRANSIENT_CODES.has(code)) return result('transient', true);

  if (systemCode && UNREACHABLE_CODES.has(systemCode)) return result('invalid_endpoint', true);
  if (systemCode && BROKEN_CONNECTION_CODES.has(systemCode)) return result('transient', true);
  if (systemCode && (NOT_S3_CODES.has(systemCode) || systemCode.startsWith('HPE_'))) {
    return result('invalid_endpoint', false);
  }

  if (status !== undefined && (status >= 500 || status === 429 || status === 408)) return result('transient', true);
  // A body the SDK cannot read as S3 XML below 500 (an HTML page, a JSON API): not an S3 endpoint.
  if (facts.notS3Response) return result('invalid_endpoint', false);
  // HEAD answers carry no body, so the code is missing; the status still tells.
  if (status === 401 || status === 403) return result('access_denied', false);
  return result('unknown', facts.sdkRetryable);
}

/** True for failures that only a fix of the destination can cure: fail the export instead of retrying. */
export function isDestinationError(err: unknown): boolean {
  const { kind, retryable } = classifyS3Error(err);
  return !retryable && kind !== 'unknown' && kind !== 'transient';
}

function readFacts(err: unknown): ErrorFacts {
  const e = (typeof err === 'object' && err !== null ? err : { message: String(err) }) as Record<string, unknown>;
  const cause = typeof e.cause === 'object' && e.cause !== null ? (e.cause as Record<string, unknown>) : {};
  const metadata = (e.$metadata ?? {}) as { httpStatusCode?: unknown };
  const status = typeof metadata.httpStatusCode === 'number' ? metadata.httpStatusCode : undefined;
  const message = typeof e.message === 'string' ? e.message : '';
  const systemCode = stringOf(e.code) ?? stringOf(cause.code);
  // The SDK names service errors after the XML <Code>; generic names say nothing about the store.
  const name = stringOf(e.Code) ?? stringOf(e.name);
  const code = name && !['Error', 'TypeError', 'Unknown', 'UnknownError'].includes(name) ? name : undefined;
  // middleware-serde marks responses it could not parse; a service error would carry `$fault` instead.
  const notS3Response = /Deserialization error|XML parse error/i.test(message) || ('$response' in e && !e.$fault);
  const retryableFlag = e.$retryable as unknown;
  return { code, status, systemCode, message, notS3Response, sdkRetryable: Boolean(retryableFlag) };
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function describe({ code, status, systemCode, message }: ErrorFacts): string {
  const label = [code ?? systemCode, status === undefined ? undefined : `HTTP ${status}`].filter(Boolean).join(', ');
  // The SDK appends a multi-line hint about `$response` to parse errors; logs want the first line.
  const firstLine = message.split('\n')[0]?.trim() ?? '';
  if (!label) return firstLine || 'unknown S3 error';
  return firstLine && firstLine !== code ? `${label}: ${firstLine}` : label;
}
