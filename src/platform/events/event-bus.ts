// Publish/subscribe by topic, within one process or across processes through PostgreSQL LISTEN/NOTIFY.
// Messages published by one publisher on one topic arrive in order: across processes each publisher
// chains its NOTIFYs, and large messages are split into pieces (NOTIFY payloads stop at 8000 bytes).
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/index.ts';

export type EventHandler = (message: string) => void;

export interface PublishOptions {
  /**
   * Send to other processes only while one of them has announced interest in the topic (bulky data
   * nobody elsewhere reads stays in the process). Control messages leave this unset.
   */
  onlyIfAnnounced?: boolean;
}

export interface EventBus {
  publish(topic: string, message: string, options?: PublishOptions): void;
  /**
   * Tells other processes that this one subscribes to a topic published with `onlyIfAnnounced`.
   * Resolves once the announcement is out; the returned function withdraws it.
   */
  announce(topic: string): Promise<() => void>;
  /** Whether a message on the topic would reach anyone (here, or in a process that announced it). */
  listening(topic: string): boolean;
  /** Resolves once every message published so far has left this process. */
  flush(): Promise<void>;
  subscribe(topic: string, handler: EventHandler): () => void;
  close(): Promise<void>;
}

/** Topic → handlers, shared by every bus. */
export class Subscriptions {
  readonly #handlers = new Map<string, Set<EventHandler>>();
  subscribe(topic: string, handler: EventHandler): () => void {
    let set = this.#handlers.get(topic);
    if (!set) {
      set = new Set();
      this.#handlers.set(topic, set);
    }
    set.add(handler);
    return () => {
      set.delete(handler);
      if (set.size === 0 && this.#handlers.get(topic) === set) this.#handlers.delete(topic);
    };
  }
  has(topic: string): boolean {
    return this.#handlers.has(topic);
  }
  deliver(topic: string, message: string): void {
    const set = this.#handlers.get(topic);
    if (!set) return;
    for (const handler of [...set]) {
      try {
        handler(message);
      } catch {
        // a failing subscriber must not stop the others
      }
    }
  }
}

/** Applies one announcement ("+topic" or "-topic") to the live counts of other processes' interest. */
export function countInterest(interest: Map<string, number>, announcement: string): void {
  const target = announcement.slice(1);
  const count = (interest.get(target) ?? 0) + (announcement[0] === '+' ? 1 : -1);
  if (count > 0) interest.set(target, count);
  else interest.delete(target);
}

export class LocalEventBus implements EventBus {
  readonly #subscriptions = new Subscriptions();
  publish(topic: string, message: string): void {
    this.#subscriptions.deliver(topic, message);
  }
  async announce(): Promise<() => void> {
    return () => undefined;
  }
  listening(topic: string): boolean {
    return this.#subscriptions.has(topic);
  }
  async flush(): Promise<void> {}
  subscribe(topic: string, handler: EventHandler): () => void {
    return this.#subscriptions.subscribe(topic, handler);
  }
  async close(): Promise<void> {}
}

/** Bytes of payload per NOTIFY piece, below PostgreSQL's 8000-byte limit with room for the header. */
const PIECE = 7000;
/** Reserved topic of interest announcements: message "+topic" or "-topic". */
export const INTEREST = '~bus:interest';

/**
 * What every bus between processes shares: local subscribers hear a message at once, other processes
 * through the transport (`send`), and topics published with `onlyIfAnnounced` cross over only while
 * another process announced interest. Subclasses carry messages and hand arrivals to `receive`.
 */
export abstract class CrossProcessEventBus implements EventBus {
  readonly #subscriptions = new Subscriptions();
  /** Topics other processes announced, with how many announcements are live. */
  readonly #remoteInterest = new Map<string, number>();

  /** Sends to the other processes; messages of one publisher leave in the order sent. */
  protected abstract send(topic: string, message: string): void;
  abstract flush(): Promise<void>;
  abstract close(): Promise<void>;

  publish(topic: string, message: string, options: PublishOptions = {}): void {
    this.#subscriptions.deliver(topic, message);
    if (options.onlyIfAnnounced && !this.#remoteInterest.has(topic)) return;
    this.send(topic, message);
  }

  listening(topic: string): boolean {
    return this.#subscriptions.has(topic) || this.#remoteInterest.has(topic);
  }

  async announce(topic: string): Promise<() => void> {
    this.send(INTEREST, `+${topic}`);
    await this.flush();
    let withdrawn = false;
    return () => {
      if (withdrawn) return;
      withdrawn = true;
      this.send(INTEREST, `-${topic}`);
    };
  }

  subscribe(topic: string, handler: EventHandler): () => void {
    return this.#subscriptions.subscribe(topic, handler);
  }

  /** A message that arrived from another process. */
  protected receive(topic: string, message: string): void {
    if (topic === INTEREST) countInterest(this.#remoteInterest, message);
    else this.#subscriptions.deliver(topic, message);
  }
}

export class PostgresEventBus extends CrossProcessEventBus {
  readonly #db: Db;
  readonly #channel: string;
  readonly #origin = randomUUID().slice(0, 8);
  readonly #partial = new Map<string, string[]>();
  #chain: Promise<unknown> = Promise.resolve();
  #unlisten: (() => Promise<void>) | undefined;
  #counter = 0;

  private constructor(db: Db, channel: string) {
    super();
    this.#db = db;
    this.#channel = channel;
  }

  static async start(db: Db, channel: string): Promise<PostgresEventBus> {
    const bus = new PostgresEventBus(db, channel);
    bus.#unlisten = await db.listen(channel, (payload) => bus.#receive(payload));
    return bus;
  }

  protected send(topic: string, message: string): void {
    const body = `${topic}\n${message}`;
    const id = `${this.#origin}.${++this.#counter}`;
    const count = Math.max(1, Math.ceil(body.length / PIECE));
    for (let index = 0; index < count; index++) {
      const payload = `${id}|${index}|${count}|${body.slice(index * PIECE, (index + 1) * PIECE)}`;
      this.#chain = this.#chain.then(() => this.#db.notify(this.#channel, payload)).catch(() => undefined);
    }
  }

  flush(): Promise<void> {
    return this.#chain.then(() => undefined);
  }

  #receive(payload: string): void {
    const first = payload.indexOf('|');
    const second = payload.indexOf('|', first + 1);
    const third = payload.indexOf('|', second + 1);
    if (first < 0 || second < 0 || third < 0) return;
    const id = payload.slice(0, first);
    if (id.startsWith(`${this.#origin}.`)) return;
    const index = Number(payload.slice(first + 1, second));
    const count = Number(payload.slice(second + 1, third));
    const piece = payload.slice(third + 1);
    let body = piece;
    if (count > 1) {
      const parts = this.#partial.get(id) ?? new Array<string>(count);
      parts[index] = piece;
      if (parts.filter((part) => part !== undefined).length < count) {
        this.#partial.set(id, parts);
        return;
      }
      this.#partial.delete(id);
      body = parts.join('');
    }
    const newline = body.indexOf('\n');
    if (newline < 0) return;
    this.receive(body.slice(0, newline), body.slice(newline + 1));
  }

  async close(): Promise<void> {
    await this.flush();
    await this.#unlisten?.();
  }
}
