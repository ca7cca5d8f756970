// The checkpointer's serializer: the same bytes as LangGraph's JsonPlusSerializer (checkpoints written by
// either read back with the other), in less time. A run reads its thread's whole state once and writes it
// at every step, so this cost grows with the thread: the reference implementation walks every value twice
// to replace cycles before stringifying, and revives every value of a loaded checkpoint with its own
// promise. Here values are stringified natively (cycles, which JSON cannot hold anyway, fall back to the
// reference serializer) and revived in one synchronous pass, plain messages included; other LangChain
// objects go through `load`, all of them at once.
import { load } from '@langchain/core/load';
import * as messages from '@langchain/core/messages';
import type { SerializerProtocol } from '@langchain/langgraph-checkpoint';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The reference serializer's encoding of a class instance JSON cannot represent. */
function constructorOf(name: string, method: string | null, args: unknown[]): Record<string, unknown> {
  return { lc: 2, type: 'constructor', id: [name], method, args, kwargs: {} };
}

/** JSON.stringify replacer with the reference serializer's encodings (after each value's own toJSON). */
function encodeSpecial(_key: string, value: unknown): unknown {
  if (value === undefined) return { lc: 2, type: 'undefined' };
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Set || value instanceof Map) return constructorOf(value.constructor.name, null, [Array.from(value)]);
  if (value instanceof RegExp) return constructorOf('RegExp', null, [value.source, value.flags]);
  if (value instanceof Error) return constructorOf(value.constructor.name, null, [value.message]);
  if ((value as { lg_name?: unknown }).lg_name === 'Send') {
    const send = value as { node: unknown; args: unknown };
    return { node: send.node, args: send.args };
  }
  if (value instanceof Uint8Array) return constructorOf('Uint8Array', 'from', [Array.from(value)]);
  return value;
}

const BUILT_INS: Record<string, any> = { Set, Map, RegExp, Error, Uint8Array };
/** `load` refuses values nested deeper than 50 levels; deep ones are left to it. */
const MAX_PLAIN_DEPTH = 40;

/** Slots whose LangChain objects are loaded together after the synchronous pass. */
interface PendingLoad {
  holder: Record<string | number, unknown>;
  key: string | number;
  text: string;
}

const messageClasses = messages as unknown as Record<string, (new (fields: Record<string, unknown>) => unknown) | undefined>;
const invertedAliases = new Map<unknown, Record<string, string>>();

/** `load`'s key mapping for a class: its aliases (along the prototype chain) inverted. */
function aliasesOf(constructor: new (fields: Record<string, unknown>) => unknown): Record<string, string> {
  let inverted = invertedAliases.get(constructor);
  if (!inverted) {
    const aliases: Record<string, string> = {};
    for (let current: any = constructor; current?.prototype; current = Object.getPrototypeOf(current)) {
      Object.assign(aliases, Reflect.get(current.prototype, 'lc_aliases'));
    }
    inverted = Object.fromEntries(Object.entries(aliases).map(([key, value]) => [value, key]));
    invertedAliases.set(constructor, inverted);
  }
  return inverted;
}

/** `load`'s snake_case → camelCase for keys without an alias. */
function camelCase(key: string): string {
  const trimmed = key.trim();
  if (!/[-_\s]/.test(trimmed)) return trimmed;
  return trimmed.replace(/[-_\s]+/g, '_').toLowerCase().replace(/_+([a-z0-9])/g, (_, char: string) => char.toUpperCase());
}

/**
 * Revives parsed JSON bottom-up as the reference does: `{lc: 2}` markers become undefined or built-in
 * instances; outermost `{lc: 1}` constructor objects become LangChain objects. A message whose fields hold
 * nothing `load` would treat specially (nested LangChain objects, escaped objects, secrets) is built here
 * exactly as `load` builds it; anything else is queued for `load` itself (its slot is filled after the pass).
 */
class Reviver {
  readonly pending: PendingLoad[] = [];
  /** Objects seen so far that carry an `lc` or escape key: tells whether a subtree is plain data. */
  #marked = 0;
  /** The deepest level reached so far (a message nested too deeply is left to `load`, which refuses it). */
  #deepest = 0;

  revive(value: unknown, insideLangChain: boolean, holder: Record<string | number, unknown>, key: string | number, depth: number): unknown {
    if (depth > this.#deepest) this.#deepest = depth;
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) value[i] = this.revive(value[i], insideLangChain, value as unknown as Record<number, unknown>, i, depth + 1);
      return value;
    }
    const record = value as Record<string, unknown>;
    const isLangChain = record.lc === 1 && record.type === 'constructor' && Array.isArray(record.id);
    const markedBefore = this.#marked;
    const deepestBefore = this.#deepest;
    this.#deepest = depth;
    for (const field of Object.keys(record)) {
      record[field] = this.revive(record[field], insideLangChain || isLangChain, record, field, depth + 1);
    }
    const plainInside = this.#marked === markedBefore && this.#deepest - depth < MAX_PLAIN_DEPTH;
    this.#deepest = Math.max(deepestBefore, this.#deepest);
    if ('lc' in record || '__lc_escaped__' in record) this.#marked++;
    if (record.lc === 2 && record.type === 'undefined') return undefined;
    if (record.lc === 2 && record.type === 'constructor' && Array.isArray(record.id)) {
      const constructor = BUILT_INS[String(record.id.at(-1))];
      if (!constructor) return record;
      const args = Array.isArray(record.args) ? record.args : [];
      try {
        return record.method ? constructor[String(record.method)](...args) : new constructor(...args);
      } catch {
        return record;
      }
    }
    if (!isLangChain || insideLangChain) return record;
    const message = plainInside ? this.#message(record) : undefined;
    if (message) return message;
    this.pending.push({ holder, key, text: JSON.stringify(record) });
    return record;
  }

  /** A core message class instance, built as `load` builds it, or undefined when `load` must decide. */
  #message(record: Record<string, unknown>): unknown {
    const id = record.id as unknown[];
    const kwargs = record.kwargs;
    if (id.length !== 3 || id[0] !== 'langchain_core' || id[1] !== 'messages') return undefined;
    if (kwargs === null || typeof kwargs !== 'object' || Array.isArray(kwargs)) return undefined;
    const name = String(id[2]);
    const constructor = Object.hasOwn(messageClasses, name) ? messageClasses[name] : undefined;
    if (typeof constructor !== 'function') return undefined;
    const aliases = aliasesOf(constructor);
    const fields: Record<string, unknown> = {};
    for (const field of Object.keys(kwargs)) {
      const value = (kwargs as Record<string, unknown>)[field];
      if (value !== undefined) fields[aliases[field] || camelCase(field)] = value;
    }
    const instance = new constructor(fields);
    Object.defineProperty((instance as object).constructor, 'name', { value: name });
    return instance;
  }
}

export class CheckpointSerializer implements SerializerProtocol {
  readonly #fallback: SerializerProtocol;

  /** `fallback` is the reference serializer, used for values with cycles. */
  constructor(fallback: SerializerProtocol) {
    this.#fallback = fallback;
  }

  /**
   * `forms`, when given, receives each LangChain object's serialized form (its toJSON) as written: a run's
   * answer reuses those of its final checkpoint instead of computing them again (see run-stream serialize).
   */
  async dumpsTyped(value: unknown, forms?: WeakMap<object, unknown>): Promise<[string, Uint8Array]> {
    if (value instanceof Uint8Array) return ['bytes', value];
    let text: string;
    try {
      text = JSON.stringify(value, forms ? function recording(this: any, key: string, current: unknown) {
        const raw = this[key];
        if (current !== raw && raw !== null && typeof raw === 'object' && (current as { lc?: unknown } | null)?.lc === 1) forms.set(raw, current);
        return encodeSpecial(key, current);
      } : encodeSpecial);
    } catch (error) {
      if (error instanceof TypeError) return this.#fallback.dumpsTyped(value);
      throw error;
    }
    return ['json', encoder.encode(text)];
  }

  async loadsTyped(type: string, data: Uint8Array | string): Promise<unknown> {
    if (type === 'bytes') return typeof data === 'string' ? encoder.encode(data) : data;
    if (type !== 'json') throw new Error(`Unknown serialization type: ${type}`);
    const root: Record<string, unknown> = { value: JSON.parse(typeof data === 'string' ? data : decoder.decode(data)) };
    const reviver = new Reviver();
    root.value = reviver.revive(root.value, false, root, 'value', 0);
    const { pending } = reviver;
    const loaded = await Promise.all(pending.map((slot) => load(slot.text)));
    pending.forEach((slot, index) => {
      slot.holder[slot.key] = loaded[index];
    });
    return root.value;
  }
}
