// The event bus across processes through Redis pub/sub (selected by REDIS_URL), with the semantics of
// PostgresEventBus: local subscribers hear a message at once and other processes through the channel, a
// process ignores its own messages, messages of one publisher on one topic arrive in order, and topics
// published with `onlyIfAnnounced` cross over only while another process announced interest.
// Redis takes payloads up to 512 MB, so messages are sent whole (no pieces, unlike NOTIFY's 8000 bytes).
import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { CrossProcessEventBus } from './event-bus.ts';

type RedisClient = ReturnType<typeof createClient>;

export interface RedisEventBusOptions {
  /** Connection name (CLIENT SETNAME) of both connections, to find them in CLIENT LIST. */
  clientName?: string;
}

/** Longest pause between reconnection attempts once the bus has been connected. */
const MAX_RECONNECT_DELAY_MS = 2000;

function connection(url: string, options: RedisEventBusOptions): RedisClient {
  let connectedOnce = false;
  const client = createClient({
    url,
    ...(options.clientName ? { name: options.clientName } : {}),
    socket: {
      // Unreachable at start-up is a configuration error (connect rejects); a lost connection later is
      // retried for ever, and node-redis subscribes again and sends the commands queued meanwhile.
      reconnectStrategy: (retries, cause) => (connectedOnce ? Math.min(50 * 2 ** Math.min(retries, 6), MAX_RECONNECT_DELAY_MS) : cause),
    },
  });
  client.on('ready', () => { connectedOnce = true; });
  // Without a listener an 'error' event would crash the process; reconnection handles the cause.
  client.on('error', () => undefined);
  return client;
}

export class RedisEventBus extends CrossProcessEventBus {
  readonly #publisher: RedisClient;
  readonly #subscriber: RedisClient;
  readonly #channel: string;
  readonly #origin = randomUUID().slice(0, 8);
  /** Settles once every PUBLISH issued so far has been answered (or failed). */
  #sent: Promise<unknown> = Promise.resolve();
  #closed = false;

  private constructor(publisher: RedisClient, subscriber: RedisClient, channel: string) {
    super();
    this.#publisher = publisher;
    this.#subscriber = subscriber;
    this.#channel = channel;
  }

  /** Connects (rejects when Redis does not answer) and subscribes to the channel. */
  static async start(url: string, channel: string, options: RedisEventBusOptions = {}): Promise<RedisEventBus> {
    const publisher = connection(url, options);
    const subscriber = connection(url, options);
    try {
      await publisher.connect();
      await subscriber.connect();
      const bus = new RedisEventBus(publisher, subscriber, channel);
      await subscriber.subscribe(channel, (payload) => bus.#receive(payload));
      return bus;
    } catch (error) {
      publisher.destroy();
      subscriber.destroy();
      throw error;
    }
  }

  protected send(topic: string, message: string): void {
    if (this.#closed) return;
    // One connection answers in the order it was asked, so PUBLISHes leave (and arrive) in order
    // without waiting for each other; while reconnecting node-redis queues them.
    const sent = this.#publisher.publish(this.#channel, `${this.#origin}|${topic}\n${message}`).catch(() => undefined);
    this.#sent = Promise.all([this.#sent, sent]);
  }

  flush(): Promise<void> {
    return this.#sent.then(() => undefined);
  }

  #receive(payload: string): void {
    const bar = payload.indexOf('|');
    const newline = payload.indexOf('\n', bar + 1);
    if (bar < 0 || newline < 0) return;
    if (payload.slice(0, bar) === this.#origin) return;
    this.receive(payload.slice(bar + 1, newline), payload.slice(newline + 1));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // Messages already published still go out while Redis is reachable; a stop while it is not must
    // not wait for its return (destroy drops the queue).
    if (this.#publisher.isReady) {
      await this.flush();
      await this.#publisher.close().catch(() => undefined);
    } else {
      this.#publisher.destroy();
    }
    if (this.#subscriber.isReady) await this.#subscriber.close().catch(() => undefined);
    else this.#subscriber.destroy();
  }
}
