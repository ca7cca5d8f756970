// Holding back a run's latest checkpoint for a moment, so that the last one of a run is written by the
// statement that ends the run (RunRepo.finish) instead of by a round trip of its own.
//
// While a run holds, its root checkpoints are serialized at once (their content is fixed when LangGraph
// hands them over) but written only when the next one arrives, when a read of the thread needs them, or
// after HOLD_MS — whichever comes first. The run's end takes the last one (`release`) and writes it in the
// same transaction as the run's end, so a crash leaves either both (the run ended with its final state) or
// neither (the run is retried from its previous checkpoint, as after any crash). Nothing is lost: a held
// checkpoint is at most HOLD_MS from its write, and a failed write keeps it for the end to retry.

/** Long enough to cover a run's last step ending and its end statement starting; short for durability. */
const HOLD_MS = 25;

export interface HeldCheckpoint {
  threadId: string;
  /** The parameters of the checkpoint insert: thread, namespace, id, parent, type, value, metadata. */
  params: unknown[];
}

interface Holding {
  held: HeldCheckpoint | undefined;
  timer: NodeJS.Timeout | undefined;
  /** The write of a held checkpoint in progress (reads and later checkpoints wait for it). */
  writing: Promise<void> | undefined;
}

export class CheckpointHold {
  readonly #runs = new Map<string, Holding>();
  readonly #write: (params: unknown[]) => Promise<void>;
  readonly #onError: (error: unknown) => void;

  constructor(write: (params: unknown[]) => Promise<void>, onError: (error: unknown) => void) {
    this.#write = write;
    this.#onError = onError;
  }

  /** From now on the run's root checkpoints are held (see the file's comment). */
  start(runId: string): void {
    this.#runs.set(runId, { held: undefined, timer: undefined, writing: undefined });
  }

  holding(runId: unknown): boolean {
    return typeof runId === 'string' && this.#runs.has(runId);
  }

  /** Holds a checkpoint of a holding run; the one it replaces is written first (checkpoints stay in order). */
  async hold(runId: string, checkpoint: HeldCheckpoint): Promise<void> {
    await this.flush(runId);
    const holding = this.#runs.get(runId);
    if (!holding) return this.#write(checkpoint.params);
    holding.held = checkpoint;
    holding.timer = setTimeout(() => void this.flush(runId).catch(this.#onError), HOLD_MS);
    holding.timer.unref();
  }

  /** Writes the run's held checkpoint now, if it has one. A failed write keeps it held. */
  async flush(runId: string): Promise<void> {
    const holding = this.#runs.get(runId);
    if (!holding) return;
    await holding.writing;
    const { held } = holding;
    if (!held) return;
    clearTimeout(holding.timer);
    holding.held = undefined;
    holding.writing = this.#write(held.params).catch((error) => {
      if (!holding.held) holding.held = held;
      throw error;
    }).finally(() => {
      holding.writing = undefined;
    });
    await holding.writing;
  }

  /** Writes what any holding run of the thread holds (before a read of the thread). */
  async flushThread(threadId: string): Promise<void> {
    for (const [runId, holding] of this.#runs) {
      if (holding.held?.threadId === threadId || holding.writing) await this.flush(runId);
    }
  }

  /** Ends holding for the run and hands over its last checkpoint, for its end statement to write. */
  async release(runId: string): Promise<HeldCheckpoint | undefined> {
    const holding = this.#runs.get(runId);
    if (!holding) return undefined;
    await holding.writing?.catch(() => undefined);
    this.#runs.delete(runId);
    clearTimeout(holding.timer);
    return holding.held;
  }

  /** Ends holding for the run, writing what it holds. */
  async stop(runId: string): Promise<void> {
    try {
      await this.flush(runId);
    } finally {
      const holding = this.#runs.get(runId);
      clearTimeout(holding?.timer);
      this.#runs.delete(runId);
    }
  }
}
