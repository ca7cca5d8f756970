// The HTTP server factory shared by every Berth process: request ids, FastAPI-shaped errors,
// pydantic-style validation, OpenAPI and the interactive reference.
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { installErrorMapper } from './error-mapper.ts';
import { installRequestValidation } from './request-validation.ts';
import { installOpenApi, type OpenApiInfo } from './openapi.ts';

export interface HttpServerOptions {
  logger: Logger;
  openapi: OpenApiInfo;
  /** Largest request body accepted, in bytes (413 beyond). */
  bodyLimit?: number;
}

export async function createHttpServer(options: HttpServerOptions): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    bodyLimit: options.bodyLimit ?? 16 * 1024 * 1024,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    // Keep-alive connections from load generators and SDK clients must not pile up forever.
    keepAliveTimeout: 72_000,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    ajv: { customOptions: { coerceTypes: false } },
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  installErrorMapper(app);
  installRequestValidation(app);
  await installOpenApi(app, options.openapi);
  app.get('/ok', { schema: { hide: true }, config: { public: true } }, async () => ({ ok: true }));
  return app;
}
