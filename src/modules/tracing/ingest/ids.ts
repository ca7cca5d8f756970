// UUID checks on the ingest hot path: the canonical lower-case form (what the SDK sends) is accepted by one
// regex test; anything else goes through the platform's pydantic-compatible checker for its error text.
import { canonicalUuid, uuidErrorText } from '../../../platform/http/validation/uuid-error.ts';

const CANONICAL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Null when valid, else pydantic's error text. */
export function uuidError(value: string): string | null {
  return CANONICAL.test(value) ? null : uuidErrorText(value);
}

/** Canonical form of a valid UUID. */
export function toCanonicalUuid(value: string): string {
  return CANONICAL.test(value) ? value : canonicalUuid(value);
}
