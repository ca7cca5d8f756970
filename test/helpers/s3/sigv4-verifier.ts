// Checks AWS Signature V4 header authentication the way S3 does, by re-signing the request with the SDK's own
// signer and the secret of the presented key, then comparing signatures. Neither fauxqs nor s3rver checks
// signatures, and without this a wrong secret would pass every test.
//
// Covered: header-signed requests with a hex payload hash, UNSIGNED-PAYLOAD and the STREAMING-* variants (only the
// seed signature in the header is checked; aws-chunked chunk signatures are forwarded unchecked).
// Not covered: presigned URLs (query-string auth) and SigV4a.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '@smithy/core/checksum';
import type { S3ErrorCode, S3ErrorOptions } from './s3-error-response.ts';
import type { S3RequestInfo } from './s3-request.ts';
import type { S3Permission } from './s3-request.ts';

export interface TestS3Key {
  accessKeyId: string;
  secretAccessKey: string;
  /** When set, requests must carry this x-amz-security-token (temporary credentials). */
  sessionToken?: string;
  allow: ReadonlySet<S3Permission>;
}

export type Verdict = { ok: true; key: TestS3Key } | { ok: false; code: S3ErrorCode; options?: S3ErrorOptions };

const MAX_CLOCK_SKEW_MS = 15 * 60 * 1000; // S3's limit

const AUTHORIZATION_PATTERN =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;

export async function verifySignature(
  req: IncomingMessage,
  request: S3RequestInfo,
  keys: ReadonlyMap<string, TestS3Key>,
  region: string,
): Promise<Verdict> {
  const authorization = header(req, 'authorization');
  if (authorization === undefined) {
    // Anonymous access: every test bucket is private.
    return 'X-Amz-Signature' in request.query || 'X-Amz-Credential' in request.query
      ? deny('AccessDenied', { message: 'Presigned URLs are not supported by the test S3 server' })
      : deny('AccessDenied');
  }
  if (!authorization.startsWith('AWS4-HMAC-SHA256 ')) {
    return deny('InvalidRequest', {
      message: 'The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.',
    });
  }
  const match = AUTHORIZATION_PATTERN.exec(authorization);
  if (!match) return deny('AuthorizationHeaderMalformed');
  const [, accessKeyId = '', scopeDate = '', scopeRegion = '', service = '', signedHeaderList = '', signature = ''] =
    match;

  const key = keys.get(accessKeyId);
  if (!key) return deny('InvalidAccessKeyId', { fields: { AWSAccessKeyId: accessKeyId } });

  const token = header(req, 'x-amz-security-token');
  if (key.sessionToken !== undefined && token === undefined) {
    // Temporary key ids are unknown to S3 without their session.
    return deny('InvalidAccessKeyId', { fields: { AWSAccessKeyId: accessKeyId } });
  }
  if (token !== undefined && token !== key.sessionToken) return deny('InvalidToken');

  if (scopeRegion !== region) {
    return deny('AuthorizationHeaderMalformed', {
      message: `The authorization header is malformed; the region '${scopeRegion}' is wrong; expecting '${region}'`,
      fields: { Region: region },
    });
  }
  if (service !== 's3') {
    return deny('AuthorizationHeaderMalformed', {
      message: `The authorization header is malformed; incorrect service '${service}'. This endpoint belongs to 's3'.`,
    });
  }

  const amzDate = header(req, 'x-amz-date');
  const signingDate = amzDate === undefined ? undefined : parseAmzDate(amzDate);
  if (!signingDate) return deny('AccessDenied', { message: 'AWS authentication requires a valid Date or x-amz-date header' });
  if (!amzDate?.startsWith(scopeDate)) {
    return deny('AuthorizationHeaderMalformed', {
      message: 'The authorization header is malformed; Invalid credential date. Date is not the same as X-Amz-Date.',
    });
  }
  if (Math.abs(Date.now() - signingDate.getTime()) > MAX_CLOCK_SKEW_MS) {
    return deny('RequestTimeTooSkewed', {
      fields: { RequestTime: amzDate ?? '', ServerTime: new Date().toISOString(), MaxAllowedSkewMilliseconds: '900000' },
    });
  }
  if (header(req, 'x-amz-content-sha256') === undefined) {
    return deny('InvalidRequest', { message: 'Missing required header for this request: x-amz-content-sha256' });
  }

  const expected = await signatureFor(req, request, key.secretAccessKey, {
    accessKeyId,
    token,
    signedHeaders: signedHeaderList.split(';'),
    signingDate,
    region: scopeRegion,
  });
  if (expected === undefined || !sameSignature(expected, signature)) {
    return deny('SignatureDoesNotMatch', { fields: { AWSAccessKeyId: accessKeyId, SignatureProvided: signature } });
  }
  return { ok: true, key };
}

interface SigningFacts {
  accessKeyId: string;
  token: string | undefined;
  signedHeaders: string[];
  signingDate: Date;
  region: string;
}

async function signatureFor(req: IncomingMessage, request: S3RequestInfo, secretAccessKey: string, facts: SigningFacts) {
  // Only the headers the client says it signed take part, so proxies adding headers do not matter (as with S3).
  const headers: Record<string, string> = {};
  for (const name of facts.signedHeaders) {
    const value = header(req, name);
    if (value === undefined) return undefined;
    headers[name] = value;
  }
  // The signer sets x-amz-date and x-amz-security-token itself from these inputs.
  const credentials =
    facts.token === undefined
      ? { accessKeyId: facts.accessKeyId, secretAccessKey }
      : { accessKeyId: facts.accessKeyId, secretAccessKey, sessionToken: facts.token };
  // As the S3 client configures it: S3 paths are signed as sent, not encoded a second time.
  const signer = new SignatureV4({ service: 's3', region: facts.region, credentials, sha256: Sha256, uriEscapePath: false });
  const [hostname = '', port] = (header(req, 'host') ?? '').split(':');
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: 'http:',
      hostname,
      port: port === undefined ? undefined : Number(port),
      path: request.rawPath,
      query: request.query,
      // x-amz-content-sha256 is present (checked above), so the signer uses it instead of hashing a body.
      headers,
    },
    { signingDate: facts.signingDate, signingRegion: facts.region, signingService: 's3' },
  );
  const resigned = signed.headers.authorization ?? '';
  return /Signature=([0-9a-f]{64})$/.exec(resigned)?.[1];
}

function sameSignature(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

function parseAmzDate(value: string): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
  return new Date(Date.UTC(y, mo - 1, d, h, mi, s));
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  if (value === undefined) return undefined;
  // Repeated headers are signed as their values joined by commas.
  return Array.isArray(value) ? value.join(',') : value;
}

function deny(code: S3ErrorCode, options?: S3ErrorOptions): Verdict {
  return options ? { ok: false, code, options } : { ok: false, code };
}
