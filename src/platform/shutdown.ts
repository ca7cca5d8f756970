import type { Logger } from 'pino';

/**
 * What a process started, stopped in the reverse order: the last thing started is the first stopped.
 * A failure is logged and the rest still get their turn; closing twice stops nothing twice.
 */
export class ShutdownList {
  readonly #closers: (() => Promise<void>)[] = [];
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  add(closer: () => Promise<void>): void {
    this.#closers.push(closer);
  }

  async closeAll(): Promise<void> {
    for (let closer = this.#closers.pop(); closer; closer = this.#closers.pop()) {
      await closer().catch((error: unknown) => this.#logger.error({ err: error }, 'error while stopping'));
    }
  }
}
