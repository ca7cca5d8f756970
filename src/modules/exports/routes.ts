// HTTP routes of bulk export (/api/v1/bulk-exports…). HTTP only: rules live in the services.
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { DestinationsService } from './destinations-service.ts';
import type { ExportsService } from './exports-service.ts';
import {
  Destination, DestinationCreateRequest, DestinationParams, DestinationPatchRequest, ErrorBody, Export, ExportCreateRequest,
  ExportParams, ExportPatchRequest, ExportRun, ExportRunParams,
} from './schemas.ts';

const tags = ['Bulk exports'];
const errors = { 404: ErrorBody, 422: ErrorBody };

export function registerExportRoutes(app: FastifyInstance, destinations: DestinationsService, exports: ExportsService): void {
  app.post<{ Body: Static<typeof DestinationCreateRequest> }>('/api/v1/bulk-exports/destinations', {
    schema: {
      tags, summary: 'Create Bulk Export Destination',
      description: 'Validates the bucket first: writes a test file under <prefix>/tmp/, reads it back and deletes it when permitted.',
      body: DestinationCreateRequest, response: { 201: Destination, 400: ErrorBody, 422: ErrorBody },
    },
  }, async (request, reply) => reply.code(201).send(await destinations.create(request.tenantId, request.body)));

  app.get('/api/v1/bulk-exports/destinations', {
    schema: { tags, summary: 'List Bulk Export Destinations', response: { 200: Type.Array(Destination) } },
  }, async (request) => destinations.list(request.tenantId));

  app.get<{ Params: Static<typeof DestinationParams> }>('/api/v1/bulk-exports/destinations/:destination_id', {
    schema: { tags, summary: 'Get Bulk Export Destination', params: DestinationParams, response: { 200: Destination, ...errors } },
  }, async (request) => destinations.get(request.tenantId, request.params.destination_id));

  app.patch<{ Params: Static<typeof DestinationParams>; Body: Static<typeof DestinationPatchRequest> }>('/api/v1/bulk-exports/destinations/:destination_id', {
    schema: {
      tags, summary: 'Update Bulk Export Destination', description: 'Rotates credentials (validated against the bucket again) or renames.',
      params: DestinationParams, body: DestinationPatchRequest, response: { 200: Destination, 400: ErrorBody, ...errors },
    },
  }, async (request) => destinations.patch(request.tenantId, request.params.destination_id, request.body));

  app.post<{ Body: Static<typeof ExportCreateRequest> }>('/api/v1/bulk-exports', {
    schema: { tags, summary: 'Create Bulk Export', body: ExportCreateRequest, response: { 201: Export, 400: ErrorBody, ...errors } },
  }, async (request, reply) => reply.code(201).send(await exports.create(request.tenantId, request.body)));

  app.get('/api/v1/bulk-exports', {
    schema: { tags, summary: 'List Bulk Exports', response: { 200: Type.Array(Export) } },
  }, async (request) => exports.list(request.tenantId));

  app.get<{ Params: Static<typeof ExportParams> }>('/api/v1/bulk-exports/:bulk_export_id', {
    schema: { tags, summary: 'Get Bulk Export', params: ExportParams, response: { 200: Export, ...errors } },
  }, async (request) => exports.get(request.tenantId, request.params.bulk_export_id));

  app.patch<{ Params: Static<typeof ExportParams>; Body: Static<typeof ExportPatchRequest> }>('/api/v1/bulk-exports/:bulk_export_id', {
    schema: { tags, summary: 'Cancel Bulk Export', description: 'Body {"status": "Cancelled"}; a cancelled export cannot be restarted.', params: ExportParams, body: ExportPatchRequest, response: { 200: Export, 409: ErrorBody, ...errors } },
  }, async (request) => exports.patch(request.tenantId, request.params.bulk_export_id, request.body.status));

  app.get<{ Params: Static<typeof ExportParams> }>('/api/v1/bulk-exports/:bulk_export_id/runs', {
    schema: { tags, summary: 'List Bulk Export Runs', params: ExportParams, response: { 200: Type.Array(ExportRun), ...errors } },
  }, async (request) => exports.listRuns(request.tenantId, request.params.bulk_export_id));

  app.get<{ Params: Static<typeof ExportRunParams> }>('/api/v1/bulk-exports/:bulk_export_id/runs/:run_id', {
    schema: { tags, summary: 'Get Bulk Export Run', params: ExportRunParams, response: { 200: ExportRun, ...errors } },
  }, async (request) => exports.getRun(request.tenantId, request.params.bulk_export_id, request.params.run_id));
}
