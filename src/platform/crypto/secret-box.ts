// Secrets at rest (deployment secrets, storage credentials): AES-256-GCM with a random 96-bit nonce.
// Stored form: "v1:<nonce b64>:<ciphertext b64>:<tag b64>", so the format can change later.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';

export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('The secret key must be 32 bytes');
    this.#key = key;
  }

  seal(plaintext: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', nonce.toString('base64'), body.toString('base64'), cipher.getAuthTag().toString('base64')].join(':');
  }

  open(sealed: string): string {
    const [version, nonce, body, tag] = sealed.split(':');
    if (version !== 'v1' || !nonce || body === undefined || !tag) throw new Error('Unrecognised sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(nonce, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
  }
}

export const SECRET_KEY_FILE = 'secret-key';

function parseKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new Error('BERTH_SECRET_KEY must be 32 bytes, as 64 hex characters or base64');
  return key;
}

/**
 * The configured key, or the one kept in the data directory (generated there, mode 0600, on first use).
 * Processes sharing one PostgreSQL on several machines must all be given the same BERTH_SECRET_KEY.
 */
export async function loadSecretBox(configured: string | undefined, dataDir: string): Promise<SecretBox> {
  if (configured) return new SecretBox(parseKey(configured));
  const file = path.join(dataDir, SECRET_KEY_FILE);
  try {
    return new SecretBox(parseKey(await readFile(file, 'utf8')));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dataDir, { recursive: true });
  const key = randomBytes(32);
  try {
    await writeFile(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    return new SecretBox(key);
  } catch (error) {
    // Another process created it first: use that one.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return new SecretBox(parseKey(await readFile(file, 'utf8')));
    throw error;
  }
}
