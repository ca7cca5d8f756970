import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadSecretBox, SecretBox, SECRET_KEY_FILE } from '../../src/platform/crypto/secret-box.ts';

test('sealed secrets open with the same key only, and never contain the plaintext', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'berth-secret-'));
  const box = await loadSecretBox(undefined, dir);
  const sealed = box.seal('hunter2');
  assert.ok(!sealed.includes('hunter2'));
  assert.notEqual(box.seal('hunter2'), sealed, 'a fresh nonce each time');
  assert.equal(box.open(sealed), 'hunter2');
  assert.equal((await stat(path.join(dir, SECRET_KEY_FILE))).mode & 0o777, 0o600);
  const again = await loadSecretBox(undefined, dir);
  assert.equal(again.open(sealed), 'hunter2', 'the generated key is reused');
  const other = new SecretBox(Buffer.alloc(32, 7));
  assert.throws(() => other.open(sealed));
  const tampered = sealed.slice(0, -4) + (sealed.endsWith('AAAA') ? 'BBBB' : 'AAAA');
  assert.throws(() => box.open(tampered));
  const configured = await loadSecretBox((await readFile(path.join(dir, SECRET_KEY_FILE), 'utf8')).trim(), '/nonexistent');
  assert.equal(configured.open(sealed), 'hunter2');
});
