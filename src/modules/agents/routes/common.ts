// Helpers shared by the agent server's routes.
import type { FastifyReply } from 'fastify';

export const nullToUndefined = <T>(value: T | null | undefined): T | undefined => (value === null ? undefined : value);

/** Keeps only the fields a search asked for with `select`. */
export function project<T extends Record<string, unknown>>(rows: T[], select: string[] | null | undefined): Record<string, unknown>[] {
  if (!select?.length) return rows;
  return rows.map((row) => Object.fromEntries(select.filter((field) => field in row).map((field) => [field, row[field]])));
}

/** The SDK reads X-Pagination-Next (with includePagination) and X-Pagination-Total. */
export function paginate(reply: FastifyReply, offset: number, count: number, limit: number, total: number): void {
  reply.header('x-pagination-total', String(total));
  if (offset + count < total && count === limit) reply.header('x-pagination-next', String(offset + limit));
}
