// Error answers shaped like AWS S3's: the status, an XML <Error> body (none for HEAD) and the request-id headers,
// so the SDK parses them into the same error names and fields it would get from AWS.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export type S3ErrorCode =
  | 'AccessDenied'
  | 'AuthorizationHeaderMalformed'
  | 'EntityTooLarge'
  | 'InternalError'
  | 'InvalidAccessKeyId'
  | 'InvalidRequest'
  | 'InvalidToken'
  | 'RequestTimeTooSkewed'
  | 'SignatureDoesNotMatch'
  | 'SlowDown'
  | 'XAmzContentSHA256Mismatch';

// Status codes and messages as AWS S3 sends them.
const S3_ERRORS: Record<S3ErrorCode, { status: number; message: string }> = {
  AccessDenied: { status: 403, message: 'Access Denied' },
  AuthorizationHeaderMalformed: { status: 400, message: 'The authorization header is malformed.' },
  EntityTooLarge: { status: 400, message: 'Your proposed upload exceeds the maximum allowed object size.' },
  InternalError: { status: 500, message: 'We encountered an internal error. Please try again.' },
  InvalidAccessKeyId: { status: 403, message: 'The AWS Access Key Id you provided does not exist in our records.' },
  InvalidRequest: { status: 400, message: 'Invalid Request' },
  InvalidToken: { status: 400, message: 'The provided token is malformed or otherwise invalid.' },
  RequestTimeTooSkewed: {
    status: 403,
    message: 'The difference between the request time and the current time is too large.',
  },
  SignatureDoesNotMatch: {
    status: 403,
    message:
      'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
  },
  SlowDown: { status: 503, message: 'Please reduce your request rate.' },
  XAmzContentSHA256Mismatch: {
    status: 400,
    message: "The provided 'x-amz-content-sha256' header does not match what was computed.",
  },
};

export interface S3ErrorOptions {
  /** Replaces the standard message (AWS varies it for some codes, e.g. the malformed-header ones). */
  message?: string;
  /** Extra child elements of <Error>, in order (AWSAccessKeyId, SignatureProvided, …). */
  fields?: Record<string, string>;
  /** The client is waiting for "100 Continue" and will never send the body: the connection cannot be reused. */
  closeConnection?: boolean;
}

export function sendS3Error(req: IncomingMessage, res: ServerResponse, code: S3ErrorCode, options: S3ErrorOptions = {}) {
  const { status, message } = S3_ERRORS[code];
  const requestId = randomBytes(8).toString('hex').toUpperCase();
  const fields = { Message: options.message ?? message, ...options.fields, RequestId: requestId, HostId: 'test-s3' };
  const body =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${code}</Code>` +
    Object.entries(fields)
      .map(([name, value]) => `<${name}>${escapeXml(value)}</${name}>`)
      .join('') +
    '</Error>';
  const headers: Record<string, string | number> = {
    'content-type': 'application/xml',
    'x-amz-request-id': requestId,
    'x-amz-id-2': 'test-s3',
    server: 'AmazonS3',
  };
  if (options.closeConnection) headers.connection = 'close';
  if (req.method === 'HEAD') {
    res.writeHead(status, headers).end();
    return;
  }
  headers['content-length'] = Buffer.byteLength(body);
  res.writeHead(status, headers).end(body);
}

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}
