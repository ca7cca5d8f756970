// /store… : long-term memory items.
import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { InvalidNamespaceError } from '@langchain/langgraph-checkpoint';
import { badRequest } from '../../../platform/errors.ts';
import { validateNamespace, type DbStore } from '../store.ts';
import * as S from '../schemas.ts';

const tags = ['Store'];

function checkNamespace(namespace: string[]): void {
  try {
    validateNamespace(namespace);
  } catch (error) {
    if (error instanceof InvalidNamespaceError) throw badRequest(error.message);
    throw error;
  }
}

export function registerStoreRoutes(app: FastifyInstance, store: DbStore): void {
  app.put<{ Body: Static<typeof S.StorePut> }>('/store/items', {
    schema: { tags, summary: 'Store or update an item', body: S.StorePut },
  }, async (request, reply) => {
    const { namespace, key, value, ttl } = request.body;
    checkNamespace(namespace);
    await store.putItem(namespace, key, value, ttl === undefined ? undefined : ttl);
    return reply.code(204).send();
  });

  app.get<{ Querystring: Static<typeof S.StoreGetQuery> }>('/store/items', {
    schema: { tags, summary: 'Retrieve a single item', querystring: S.StoreGetQuery },
  }, async (request, reply) => {
    const namespace = request.query.namespace ? request.query.namespace.split('.') : [];
    if (namespace.length === 0) throw badRequest('Namespace is required');
    const item = await store.getItem(namespace, request.query.key, request.query.refresh_ttl);
    // A missing item is a JSON null, which the SDK turns into `null` (as the reference server answers).
    if (!item) return reply.type('application/json').send('null');
    return item;
  });

  app.delete<{ Body: Static<typeof S.StoreDelete> }>('/store/items', {
    schema: { tags, summary: 'Delete an item', body: S.StoreDelete },
  }, async (request, reply) => {
    const namespace = request.body.namespace ?? [];
    if (namespace.length === 0) throw badRequest('Namespace is required');
    await store.deleteItem(namespace, request.body.key);
    return reply.code(204).send();
  });

  app.post<{ Body: Static<typeof S.StoreSearch> }>('/store/items/search', {
    schema: { tags, summary: 'Search items', body: S.StoreSearch }, config: { bodyOptional: true },
  }, async (request) => {
    const body = request.body ?? { limit: 10, offset: 0 };
    const items = await store.searchItems(body.namespace_prefix ?? [], {
      filter: body.filter ?? undefined, limit: body.limit ?? 10, offset: body.offset ?? 0, refreshTtl: body.refresh_ttl ?? undefined,
    });
    return { items };
  });

  app.post<{ Body: Static<typeof S.StoreNamespaces> }>('/store/namespaces', {
    schema: { tags, summary: 'List namespaces', body: S.StoreNamespaces }, config: { bodyOptional: true },
  }, async (request) => {
    const body = request.body ?? { limit: 100, offset: 0 };
    const matchConditions = [
      ...(body.prefix?.length ? [{ matchType: 'prefix' as const, path: body.prefix }] : []),
      ...(body.suffix?.length ? [{ matchType: 'suffix' as const, path: body.suffix }] : []),
    ];
    const namespaces = await store.namespaces({ matchConditions, maxDepth: body.max_depth ?? undefined, limit: body.limit ?? 100, offset: body.offset ?? 0 });
    return { namespaces };
  });
}
