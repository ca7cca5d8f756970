// Route schemas stay in Fastify (for OpenAPI and fast serialization), but request validation is Berth's
// own: FastAPI reports every bad field of path, query, headers and body at once, in that order, with
// pydantic's error types. Fastify's Ajv would stop at the first failing part with different messages.
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { InputValidationError } from '../errors.ts';
import { pythonJsonError } from './validation/python-json-error.ts';
import { validateBody, validateParameters, type ValidationIssue } from './validation/pydantic.ts';

type Schema = Record<string, any>;

function requestValidator(schema: Schema, bodyRequired: boolean) {
  return async (request: FastifyRequest) => {
    const issues: ValidationIssue[] = [];
    if (schema.params) {
      const outcome = validateParameters(schema.params, request.params as Record<string, unknown>, 'path');
      issues.push(...outcome.issues);
      request.params = outcome.value;
    }
    if (schema.querystring) {
      const outcome = validateParameters(schema.querystring, request.query as Record<string, unknown>, 'query');
      issues.push(...outcome.issues);
      request.query = outcome.value;
    }
    if (schema.headers) {
      const outcome = validateParameters(schema.headers, request.headers as Record<string, unknown>, 'header');
      issues.push(...outcome.issues);
    }
    if (schema.body) {
      const outcome = validateBody(schema.body, request.body, bodyRequired);
      issues.push(...outcome.issues);
      request.body = outcome.value;
    }
    if (issues.length > 0) throw new InputValidationError(issues);
  };
}

/** Installs the JSON body parser and the validation hook on every route declared after this call. */
export function installRequestValidation(app: FastifyInstance): void {
  // Fastify must not validate: Berth's hook does, with pydantic's semantics.
  app.setValidatorCompiler(() => () => true);

  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, text, done) => {
    const body = text as string;
    if (body.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(body));
    } catch {
      const problem = pythonJsonError(body) ?? { pos: 0, msg: 'Expecting value' };
      done(new InputValidationError([
        { type: 'json_invalid', loc: ['body', problem.pos], msg: 'JSON decode error', input: {}, ctx: { error: problem.msg } },
      ]), undefined);
    }
  });

  app.addHook('onRoute', (route: RouteOptions) => {
    const schema = route.schema as Schema | undefined;
    if (!schema || !(schema.params || schema.querystring || schema.headers || schema.body)) return;
    const bodyRequired = (route.config as { bodyOptional?: boolean } | undefined)?.bodyOptional !== true;
    const hooks = route.preValidation ? [route.preValidation].flat() : [];
    route.preValidation = [...hooks, requestValidator(schema, bodyRequired)] as RouteOptions['preValidation'];
  });
}
