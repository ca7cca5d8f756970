// A small in-memory map with an entry limit (oldest out first) and an optional time to live.
export class BoundedCache<V> {
  readonly #entries = new Map<string, { value: V; expires: number }>();
  readonly #max: number;
  readonly #ttlMs: number;

  constructor(options: { max: number; ttlMs?: number }) {
    this.#max = options.max;
    this.#ttlMs = options.ttlMs ?? Number.POSITIVE_INFINITY;
  }

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V): void {
    this.#entries.delete(key);
    if (this.#entries.size >= this.#max) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, { value, expires: Date.now() + this.#ttlMs });
  }

  /** The cached value, or the loaded one (which is then cached). */
  async getOrLoad(key: string, load: () => Promise<V>): Promise<V> {
    const entry = this.#entries.get(key);
    if (entry && entry.expires > Date.now()) return entry.value;
    const value = await load();
    this.set(key, value);
    return value;
  }

  clear(): void {
    this.#entries.clear();
  }
}
