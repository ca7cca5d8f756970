// Streams an accepted request to the S3 emulator and its answer back, byte for byte: aws-chunked bodies keep their
// framing (the emulator decodes it) and multi-megabyte parts never sit whole in this process.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline, Transform } from 'node:stream';
import type { TransformCallback } from 'node:stream';
import { sendS3Error } from './s3-error-response.ts';

export interface Upstream {
  host: string;
  port: number;
  agent: http.Agent;
}

// Hop-by-hop headers belong to one connection; `expect` is answered here, not by the emulator.
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'proxy-connection', 'expect', 'upgrade', 'te']);

class PayloadHashMismatch extends Error {
  readonly computed: string;
  constructor(computed: string) {
    super('x-amz-content-sha256 does not match the body');
    this.computed = computed;
  }
}

/** Resolves with the status the emulator answered (or the error status sent in its place). */
export function forwardRequest(req: IncomingMessage, res: ServerResponse, upstream: Upstream): Promise<number> {
  const claimedHash = req.headers['x-amz-content-sha256'];
  // A signed hex hash commits the client to the body; S3 rejects bodies that do not match it.
  const checkHash = typeof claimedHash === 'string' && /^[0-9a-f]{64}$/.test(claimedHash) ? claimedHash : undefined;

  return new Promise((resolve) => {
    const outbound = http.request({
      host: upstream.host,
      port: upstream.port,
      method: req.method,
      path: req.url,
      headers: withoutHopHeaders(req.headers),
      agent: upstream.agent,
    });
    let bodyRejected: PayloadHashMismatch | undefined;

    outbound.on('response', (answer) => {
      const status = answer.statusCode ?? 502;
      res.writeHead(status, withoutHopHeaders(answer.headers));
      pipeline(answer, res, () => resolve(status));
    });
    outbound.on('error', () => {
      if (bodyRejected && !res.headersSent) {
        sendS3Error(req, res, 'XAmzContentSHA256Mismatch', {
          fields: { ClientComputedContentSHA256: checkHash ?? '', S3ComputedContentSHA256: bodyRejected.computed },
        });
        resolve(400);
      } else if (!res.headersSent) {
        sendS3Error(req, res, 'InternalError');
        resolve(500);
      } else {
        res.destroy();
        resolve(res.statusCode);
      }
    });
    // The client went away mid-upload: the emulator must not see a complete (truncated) body.
    req.on('close', () => {
      if (!req.complete) outbound.destroy();
    });

    const body = checkHash ? req.pipe(hashChecker(checkHash)) : req;
    body.on('error', (err) => {
      if (err instanceof PayloadHashMismatch) bodyRejected = err;
      outbound.destroy(err);
    });
    body.pipe(outbound);
  });
}

// Holds back the latest chunk until the hash is known: with the last bytes missing, the emulator never sees a
// complete request, so a rejected body is never stored.
function hashChecker(expected: string): Transform {
  const hash = createHash('sha256');
  let held: Buffer | undefined;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      hash.update(chunk);
      const previous = held;
      held = chunk;
      callback(null, previous);
    },
    flush(callback: TransformCallback) {
      const computed = hash.digest('hex');
      if (computed !== expected) return callback(new PayloadHashMismatch(computed));
      callback(null, held);
    },
  });
}

function withoutHopHeaders(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const kept: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !NOT_FORWARDED.has(name)) kept[name] = value;
  }
  return kept;
}
