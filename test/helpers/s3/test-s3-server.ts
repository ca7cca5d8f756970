// A real S3-compatible server for tests: the fauxqs emulator in this process, behind a thin proxy that adds what
// the emulator lacks: SigV4 signature checks, per-key permissions with S3's error answers, and scripted faults.
//
//   SDK ──► proxy (127.0.0.1:<port>) ──► fauxqs (127.0.0.1:<port>, accepts any credentials)
//
// The test's own inspection helpers (createBucket, listObjects, …) talk to fauxqs directly, past the checks.
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { finished } from 'node:stream/promises';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { buildApp } from 'fauxqs';
import { FaultBook } from './faults.ts';
import type { FaultKind, FaultSpec, InjectedFault } from './faults.ts';
import { forwardRequest } from './forward.ts';
import { closeServer } from './not-s3-server.ts';
import { sendS3Error } from './s3-error-response.ts';
import type { S3ErrorCode, S3ErrorOptions } from './s3-error-response.ts';
import { describeS3Request } from './s3-request.ts';
import type { S3Permission, S3Query, S3RequestInfo } from './s3-request.ts';
import { verifySignature } from './sigv4-verifier.ts';
import type { TestS3Key } from './sigv4-verifier.ts';

// fauxqs reads each request body whole, up to this size (its Fastify bodyLimit), and drops the connection beyond it.
export const EMULATOR_MAX_BODY_BYTES = 11 * 1024 * 1024;

export interface StartTestS3Options {
  keys?: TestS3Key[];
  /** The region requests must be signed for; default us-east-1. */
  region?: string;
  buckets?: string[];
}

export interface RecordedRequest {
  method: string;
  bucket: string | undefined;
  key: string | undefined;
  permission: S3Permission;
  query: S3Query;
  accessKeyId: string | undefined;
  /** The status answered; 0 when the connection was reset or the request stalled. */
  status: number;
  /** The S3 error code when the proxy itself refused the request. */
  error?: S3ErrorCode;
  fault?: FaultKind;
}

export interface StoredObject {
  key: string;
  size: number;
}

export interface TestS3 {
  /** Give this to the code under test. Path-style only. */
  readonly endpoint: string;
  readonly region: string;
  /** Every request the proxy saw, in order of completion. */
  readonly requests: readonly RecordedRequest[];
  addKey(key: TestS3Key): void;
  createBucket(name: string): Promise<void>;
  /** Empties the bucket, then removes it. */
  deleteBucket(name: string): Promise<void>;
  listObjects(bucket: string, prefix?: string): Promise<StoredObject[]>;
  /** undefined when there is no such object. */
  getObject(bucket: string, key: string): Promise<Buffer | undefined>;
  putObject(bucket: string, key: string, body: string | Uint8Array): Promise<void>;
  injectFault(spec: FaultSpec): InjectedFault;
  clearFaults(): void;
  stop(): Promise<void>;
}

export async function startTestS3(options: StartTestS3Options = {}): Promise<TestS3> {
  const region = options.region ?? 'us-east-1';
  const keys = new Map<string, TestS3Key>((options.keys ?? []).map((k) => [k.accessKeyId, k]));
  const faults = new FaultBook();
  const requests: RecordedRequest[] = [];
  const stalled = new Set<IncomingMessage>();

  // buildApp rather than startFauxqs: the latter listens on every interface, and tests stay on loopback.
  const emulator = buildApp({ logger: false, defaultRegion: region });
  const emulatorAddress = await emulator.listen({ port: 0, host: '127.0.0.1' });
  const emulatorPort = Number(new URL(emulatorAddress).port);
  const upstream = { host: '127.0.0.1', port: emulatorPort, agent: new http.Agent({ keepAlive: true }) };

  async function handle(req: IncomingMessage, res: ServerResponse, awaitsContinue: boolean) {
    req.on('error', () => {}); // a client hanging up mid-request is routine here, not a crash
    const request = describeS3Request(req.method ?? 'GET', req.url ?? '/');
    const entry: RecordedRequest = {
      method: request.method,
      bucket: request.bucket,
      key: request.key,
      permission: request.permission,
      query: request.query,
      accessKeyId: undefined,
      status: 0,
    };
    const refuse = async (code: S3ErrorCode, errorOptions: S3ErrorOptions = {}) => {
      // Read what the client sends first, or it may see a broken pipe instead of the answer. A client waiting for
      // "100 Continue" sends nothing, so answer at once and drop the connection, as S3 does.
      if (awaitsContinue) {
        sendS3Error(req, res, code, { ...errorOptions, closeConnection: true });
      } else {
        req.resume();
        await finished(req).catch(() => {});
        sendS3Error(req, res, code, errorOptions);
      }
      entry.status = res.statusCode;
      entry.error = code;
    };

    const verdict = await verifySignature(req, request, keys, region);
    if (!verdict.ok) {
      await refuse(verdict.code, verdict.options);
    } else {
      entry.accessKeyId = verdict.key.accessKeyId;
      if (!verdict.key.allow.has(request.permission)) {
        await refuse('AccessDenied');
      } else if (bodyLength(req) > EMULATOR_MAX_BODY_BYTES) {
        await refuse('EntityTooLarge', {
          message: `The test S3 server (fauxqs) takes at most ${EMULATOR_MAX_BODY_BYTES} bytes per request; upload in parts`,
          fields: { MaxSizeAllowed: String(EMULATOR_MAX_BODY_BYTES) },
        });
      } else {
        await serve(req, res, request, entry, awaitsContinue, refuse);
      }
    }
    requests.push(entry);
  }

  // An accepted request: fail it as scripted, or pass it on to the emulator.
  async function serve(
    req: IncomingMessage,
    res: ServerResponse,
    request: S3RequestInfo,
    entry: RecordedRequest,
    awaitsContinue: boolean,
    refuse: (code: S3ErrorCode) => Promise<void>,
  ) {
    const fault = faults.take(request);
    if (fault) entry.fault = fault;
    if (fault === 'internal-error') await refuse('InternalError');
    else if (fault === 'slow-down') await refuse('SlowDown');
    else if (fault === 'reset') req.socket.resetAndDestroy();
    else if (fault === 'stall') {
      stalled.add(req);
      req.on('close', () => stalled.delete(req));
      req.resume();
    } else {
      if (awaitsContinue) res.writeContinue();
      entry.status = await forwardRequest(req, res, upstream);
    }
  }

  const onRequest = (awaitsContinue: boolean) => (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res, awaitsContinue).catch(() => {
      if (!res.headersSent) sendS3Error(req, res, 'InternalError', { closeConnection: true });
      else res.destroy();
    });
  };
  const proxy = http.createServer(onRequest(false));
  // Large uploads arrive with "Expect: 100-continue"; refusals are then answered before any body is sent.
  proxy.on('checkContinue', onRequest(true));
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

  // The emulator ignores credentials; these only satisfy the SDK.
  const backend = new S3Client({
    endpoint: emulatorAddress,
    region,
    forcePathStyle: true,
    credentials: { accessKeyId: 'test-s3-admin', secretAccessKey: 'test-s3-admin' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 1,
  });

  async function listObjects(bucket: string, prefix?: string): Promise<StoredObject[]> {
    const found: StoredObject[] = [];
    let token: string | undefined;
    do {
      const page = await backend.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const item of page.Contents ?? []) found.push({ key: item.Key ?? '', size: item.Size ?? 0 });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return found;
  }

  const testS3: TestS3 = {
    endpoint,
    region,
    requests,
    addKey(key) {
      keys.set(key.accessKeyId, key);
    },
    async createBucket(name) {
      await backend.send(new CreateBucketCommand({ Bucket: name }));
    },
    async deleteBucket(name) {
      for (const { key } of await listObjects(name)) {
        await backend.send(new DeleteObjectCommand({ Bucket: name, Key: key }));
      }
      await backend.send(new DeleteBucketCommand({ Bucket: name }));
    },
    listObjects,
    async getObject(bucket, key) {
      try {
        const answer = await backend.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return Buffer.from((await answer.Body?.transformToByteArray()) ?? []);
      } catch (err) {
        if ((err as { name?: string }).name === 'NoSuchKey') return undefined;
        throw err;
      }
    },
    async putObject(bucket, key, body) {
      await backend.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    },
    injectFault: (spec) => faults.add(spec),
    clearFaults: () => faults.clear(),
    async stop() {
      for (const req of stalled) req.socket.destroy();
      await closeServer(proxy);
      upstream.agent.destroy();
      backend.destroy();
      await emulator.close();
    },
  };
  for (const bucket of options.buckets ?? []) await testS3.createBucket(bucket);
  return testS3;
}

// The emulator counts raw bytes; a chunked aws-chunked body only declares its decoded size (a little less).
function bodyLength(req: IncomingMessage): number {
  const declared = req.headers['content-length'] ?? req.headers['x-amz-decoded-content-length'];
  return typeof declared === 'string' ? Number(declared) || 0 : 0;
}
