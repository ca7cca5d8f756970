// PostgreSQL's jsonb containment (`@>`) for values that are filtered after being read (a thread's packed
// values, see ThreadRepo.search): an object contains another when each of its keys is there with a
// contained value; an array contains another when each element of it is contained in some element;
// scalars must be equal. As in PostgreSQL, a nested array does not contain a bare scalar.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(value: unknown): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function jsonContains(target: unknown, filter: unknown): boolean {
  if (Array.isArray(filter)) {
    return Array.isArray(target) && filter.every((wanted) => target.some((item) => jsonContains(item, wanted)));
  }
  if (isObject(filter)) {
    return isObject(target) && Object.entries(filter).every(([key, wanted]) => Object.hasOwn(target, key) && jsonContains(target[key], wanted));
  }
  return target === filter;
}
