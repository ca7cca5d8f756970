// langgraph.json `http`: a user's own routes mounted beside the API (a Fastify plugin, or a Hono-style
// app with `fetch` and `routes`), and CORS.
import { pathToFileURL } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { GraphConfigError } from './graph-config.ts';

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']);

async function forward(fetchApp: { fetch(request: Request): Promise<Response> | Response }, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const url = `http://${request.headers.host ?? 'localhost'}${request.url}`;
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : String(value));
  }
  let body: string | Buffer | undefined;
  if (request.method !== 'GET' && request.method !== 'HEAD' && request.body !== undefined) {
    body = typeof request.body === 'string' || Buffer.isBuffer(request.body) ? request.body : JSON.stringify(request.body);
  }
  const response = await fetchApp.fetch(new Request(url, { method: request.method, headers, body }));
  reply.code(response.status);
  response.headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'transfer-encoding') reply.header(name, value);
  });
  return void reply.send(Buffer.from(await response.arrayBuffer()));
}

export async function mountUserApp(app: FastifyInstance, target: { file: string; exportName: string }): Promise<void> {
  const where = `http.app (${target.file}, export "${target.exportName}")`;
  let exported: any;
  try {
    exported = (await import(pathToFileURL(target.file).href))[target.exportName];
  } catch (error) {
    throw new GraphConfigError(`Cannot load ${where}: ${(error as Error).message}`);
  }
  if (exported && typeof exported.fetch === 'function' && Array.isArray(exported.routes)) {
    const seen = new Set<string>();
    for (const route of exported.routes as { method: string; path: string }[]) {
      const method = route.method.toUpperCase();
      if (!METHODS.has(method) || route.path.includes('*')) continue;
      const key = `${method} ${route.path}`;
      if (seen.has(key)) continue;
      seen.add(key);
      app.route({
        method: method as HTTPMethods,
        url: route.path,
        schema: { hide: true },
        config: { public: true },
        handler: (request, reply) => forward(exported, request, reply),
      });
    }
    return;
  }
  if (typeof exported === 'function') {
    await app.register(exported);
    return;
  }
  throw new GraphConfigError(`Cannot load ${where}: expected a Fastify plugin or a Hono app`);
}

/** `http.cors`: allow_origins, allow_methods, allow_headers, allow_credentials, expose_headers, max_age. */
export function installCors(app: FastifyInstance, cors: Record<string, unknown> | undefined): void {
  if (!cors) return;
  const origins = (cors.allow_origins as string[] | undefined) ?? ['*'];
  const methods = ((cors.allow_methods as string[] | undefined) ?? ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']).join(', ');
  const allowHeaders = ((cors.allow_headers as string[] | undefined) ?? ['*']).join(', ');
  const expose = ((cors.expose_headers as string[] | undefined) ?? ['content-location', 'x-pagination-total', 'x-pagination-next']).join(', ');
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (!origin) return;
    if (!origins.includes('*') && !origins.includes(origin)) return;
    reply.header('access-control-allow-origin', origins.includes('*') && !cors.allow_credentials ? '*' : origin);
    reply.header('vary', 'Origin');
    if (cors.allow_credentials) reply.header('access-control-allow-credentials', 'true');
    reply.header('access-control-expose-headers', expose);
    if (request.method === 'OPTIONS') {
      reply.header('access-control-allow-methods', methods);
      reply.header('access-control-allow-headers', allowHeaders === '*' ? (request.headers['access-control-request-headers'] ?? '*') : allowHeaders);
      if (cors.max_age !== undefined) reply.header('access-control-max-age', String(cors.max_age));
      return reply.code(204).send();
    }
  });
}
