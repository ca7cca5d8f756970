// The Redis the tests use (`TEST_REDIS_URL`, default the local one) and whether it answers, so that Redis
// tests can skip with a clear message on a machine without it.
import { randomBytes } from 'node:crypto';
import net from 'node:net';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Undefined when Redis answers PING; otherwise the skip message. */
export async function redisUnavailable(): Promise<string | undefined> {
  const url = new URL(TEST_REDIS_URL);
  const answered = await new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port || 6379) });
    let reply = '';
    const done = (ok: boolean) => { socket.destroy(); resolve(ok); };
    socket.setTimeout(2000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    // +PONG, or -NOAUTH from a Redis that wants a password (the URL carries it; it still answers)
    socket.on('data', (chunk) => { reply += chunk.toString(); if (reply.includes('\r\n')) done(/^[+-]/.test(reply)); });
  });
  return answered ? undefined : `Redis does not answer at ${url.host} (set TEST_REDIS_URL)`;
}

/** A channel no other test uses, so tests sharing one Redis never hear each other. */
export function uniqueChannel(label: string): string {
  return `berth_test:${label}:${randomBytes(6).toString('hex')}`;
}
