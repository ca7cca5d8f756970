// Application errors: services throw these; the HTTP layer alone maps them to status codes.
import type { ValidationIssue } from './http/validation/pydantic.ts';

export type AppErrorKind =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'unprocessable'
  | 'unavailable';

export class AppError extends Error {
  readonly kind: AppErrorKind;
  constructor(kind: AppErrorKind, message: string) {
    super(message);
    this.kind = kind;
  }
}

export const badRequest = (message: string) => new AppError('bad_request', message);
export const notFound = (message: string) => new AppError('not_found', message);
export const conflict = (message: string) => new AppError('conflict', message);
export const forbidden = (message: string) => new AppError('forbidden', message);
/** A well-formed request the current state refuses (FastAPI's 422 with a plain `detail`). */
export const unprocessable = (message: string) => new AppError('unprocessable', message);
export const unauthorized = (message: string) => new AppError('unauthorized', message);

/** Input that fails validation outside the request schema (cross-field rules); answered as 422. */
export class InputValidationError extends Error {
  readonly issues: ValidationIssue[];
  constructor(issues: ValidationIssue[]) {
    super(issues.map((item) => `${item.loc.join('.')}: ${item.msg}`).join('; '));
    this.issues = issues;
  }
}
