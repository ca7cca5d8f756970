// OpenAPI document generated from the route schemas, at /openapi.json, and an interactive reference at /docs.
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
}

export async function installOpenApi(app: FastifyInstance, info: OpenApiInfo): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info,
      components: {
        securitySchemes: {
          'API Key': { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
          'Tenant ID': { type: 'apiKey', in: 'header', name: 'X-Tenant-Id' },
          'Bearer Auth': { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ 'API Key': [] }, { 'Tenant ID': [] }, { 'Bearer Auth': [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });
  app.get('/openapi.json', { schema: { hide: true }, config: { public: true } }, async () => app.swagger());
}
