import { createHash, randomBytes } from 'node:crypto';

/** A new service key: prefix for recognisability, 256 random bits. */
export function generateApiKey(): string {
  return `berth_sk_${randomBytes(32).toString('base64url')}`;
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** Enough of a key to tell keys apart in listings, never enough to use it. */
export function keyPrefix(key: string): string {
  return `${key.slice(0, Math.min(12, Math.floor(key.length / 3)))}…`;
}
