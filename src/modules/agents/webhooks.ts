// Webhooks: a POST of the finished run to the URL the run named, retried with back-off.
import type { Logger } from 'pino';

export interface WebhookSender {
  send(url: string, body: Record<string, unknown>): void;
  close(): Promise<void>;
}

export function createWebhookSender(options: { logger: Logger; attempts?: number; baseDelayMs?: number; timeoutMs?: number }): WebhookSender {
  const attempts = options.attempts ?? 3;
  const baseDelayMs = options.baseDelayMs ?? 500;
  const pending = new Set<Promise<void>>();
  let closed = false;
  async function deliver(url: string, body: Record<string, unknown>): Promise<void> {
    const payload = JSON.stringify({ ...body, webhook_sent_at: new Date().toISOString() });
    for (let attempt = 1; attempt <= attempts && !closed; attempt++) {
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: payload,
          signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
        });
        if (response.ok) return;
        options.logger.warn({ url, status: response.status, attempt }, 'webhook answered an error');
      } catch (error) {
        options.logger.warn({ url, err: error, attempt }, 'webhook failed');
      }
      await new Promise((resolve) => setTimeout(resolve, baseDelayMs * 2 ** (attempt - 1)));
    }
  }
  return {
    send(url, body) {
      const job = deliver(url, body).finally(() => pending.delete(job));
      pending.add(job);
    },
    async close() {
      closed = true;
      await Promise.allSettled([...pending]);
    },
  };
}
