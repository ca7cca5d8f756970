// A drain run on demand (claim queued work until there is none): never two at once, and a wake that
// arrives while one runs makes it run once more afterwards, so nothing announced meanwhile is missed.
export class CoalescedDrain {
  readonly #drain: () => Promise<void>;
  readonly #onError: (error: unknown) => void;
  #running = false;
  #again = false;

  constructor(drain: () => Promise<void>, onError: (error: unknown) => void) {
    this.#drain = drain;
    this.#onError = onError;
  }

  wake(): void {
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    void this.#loop();
  }

  async #loop(): Promise<void> {
    try {
      do {
        this.#again = false;
        await this.#drain();
      } while (this.#again);
    } catch (error) {
      this.#onError(error);
    } finally {
      this.#running = false;
    }
  }
}
