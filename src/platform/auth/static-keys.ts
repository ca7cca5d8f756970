// Authentication against a fixed set of API keys given to the process (an agent server's keys):
// X-Api-Key on every route except those marked public (health, docs).
import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { unauthorized } from '../errors.ts';

const digest = (value: string) => createHash('sha256').update(value).digest();

export function installStaticKeyAuth(app: FastifyInstance, keys: string[], publicPaths: (path: string) => boolean): void {
  const digests = keys.map(digest);
  app.addHook('onRequest', async (request) => {
    if (request.method === 'OPTIONS') return;
    const path = request.url.split('?')[0]!;
    if (request.routeOptions.config?.public || request.is404 || publicPaths(path)) return;
    const header = request.headers['x-api-key'];
    const presented = Array.isArray(header) ? header[0] : header;
    if (!presented) throw unauthorized('Missing authentication: send the API key in the X-Api-Key header.');
    const candidate = digest(presented.trim());
    // Compare against every key in constant time so that timing reveals nothing about which matched.
    let ok = false;
    for (const key of digests) ok = timingSafeEqual(key, candidate) || ok;
    if (!ok) throw unauthorized('Invalid API key.');
  });
}
