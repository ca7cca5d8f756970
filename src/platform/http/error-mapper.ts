// The one error mapper: every error leaves the server FastAPI-shaped, {"detail": ...}.
import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError, InputValidationError, type AppErrorKind } from '../errors.ts';

const STATUS: Record<AppErrorKind, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unprocessable: 422,
  unavailable: 503,
};

/** The status code an application error is answered with. */
export function statusOf(error: AppError): number {
  return STATUS[error.kind];
}

export function installErrorMapper(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    if (error instanceof InputValidationError) {
      return reply.code(422).send({ detail: error.issues });
    }
    if (error instanceof AppError) {
      const status = statusOf(error);
      if (status === 401) reply.header('www-authenticate', 'API-Key');
      return reply.code(status).send({ detail: error.message });
    }
    const statusCode = (error as FastifyError).statusCode;
    if (statusCode && statusCode >= 400 && statusCode < 500) {
      return reply.code(statusCode).send({ detail: error.message });
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send({ detail: 'Internal Server Error' });
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ detail: 'Not Found' }));
}
