// Server-sent events on a Fastify reply: takes over the raw response, writes `event/data/id` frames,
// comment keep-alives while idle, and tells the caller when the client went away.
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface SseStream {
  /** `data` is already JSON (or any text without newlines handled below). */
  send(event: string, data: string, id?: string | number): void;
  keepAlive(): void;
  end(): void;
  readonly closed: boolean;
  /** Called once if the client disconnects before end(). */
  onClose(handler: () => void): void;
}

export function openSse(request: FastifyRequest, reply: FastifyReply, headers: Record<string, string> = {}): SseStream {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': String(request.id),
    ...corsHeaders(reply),
    ...headers,
  });
  raw.flushHeaders?.();
  let closed = false;
  let ended = false;
  const handlers: (() => void)[] = [];
  raw.on('close', () => {
    if (closed) return;
    closed = true;
    if (!ended) for (const handler of handlers) handler();
  });
  return {
    send(event, data, id) {
      if (closed) return;
      const lines = data.includes('\n') ? data.split('\n').map((line) => `data: ${line}`).join('\n') : `data: ${data}`;
      raw.write(`event: ${event}\n${lines}\n${id !== undefined ? `id: ${id}\n` : ''}\n`);
    },
    keepAlive() {
      if (!closed) raw.write(': heartbeat\n\n');
    },
    end() {
      ended = true;
      if (!closed) raw.end();
    },
    get closed() {
      return closed;
    },
    onClose(handler) {
      handlers.push(handler);
    },
  };
}

/** Headers set on the reply by hooks (CORS) before the hijack must still reach the client. */
function corsHeaders(reply: FastifyReply): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (name.startsWith('access-control-') && value !== undefined) out[name] = String(value);
  }
  return out;
}
