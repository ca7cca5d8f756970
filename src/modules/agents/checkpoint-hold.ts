// Holding back what a run writes to its thread's checkpoints for a moment, so that a short run's
// checkpoints and pending writes are written by the statement that ends the run (RunRepo.finish) instead
// of by a round trip each, and a long run's by one statement per HOLD_MS instead of one per step.
//
// While a run holds, its root checkpoints and pending writes are serialized at once (their content is
// fixed when LangGraph hands them over) and collected; they are written together after HOLD_MS, when a
// read of the thread needs them, or by the run's end, which takes them (`release`) and writes them in the
// same transaction as the run's end — so a crash leaves either both (the run ended with its final state)
// or neither (the run is retried from its last written checkpoint, as after any crash). Nothing is lost:
// what is held is at most HOLD_MS from its write, and a failed write keeps it for the next one to retry.

/** Long enough to cover a short run from its first step to its end statement; short for durability. */
const HOLD_MS = 25;

/** One row to write: a checkpoint or a pending write, as the parameters of its insert (see DbCheckpointSaver). */
export interface HeldRow {
  kind: 'checkpoint' | 'write';
  /** The row's primary key within its thread. */
  key: string;
  params: unknown[];
  /**
   * Whether a later row with the same key replaces this one (checkpoints; writes to special channels), or
   * the first one written stays (ordinary pending writes) — the statement's ON CONFLICT rule, applied to
   * the rows held together too (one INSERT cannot touch the same row twice).
   */
  replaces: boolean;
}

export class HeldRows {
  readonly #rows = new Map<string, HeldRow>();

  static of(rows: HeldRow[]): HeldRows {
    const held = new HeldRows();
    for (const row of rows) held.add(row);
    return held;
  }

  add(row: HeldRow): void {
    const key = `${row.kind}\u0000${row.key}`;
    if (!row.replaces && this.#rows.has(key)) return;
    this.#rows.set(key, row);
  }

  /** These rows followed by the newer ones (after a failed write, the rows held since join them). */
  followedBy(newer: HeldRows): HeldRows {
    for (const row of newer.#rows.values()) this.add(row);
    return this;
  }

  get empty(): boolean {
    return this.#rows.size === 0;
  }

  rows(): IterableIterator<HeldRow> {
    return this.#rows.values();
  }
}

interface Holding {
  threadId: string | undefined;
  rows: HeldRows;
  timer: NodeJS.Timeout | undefined;
  /** The write of held rows in progress (later writes and reads wait for it). */
  writing: Promise<void> | undefined;
}

export class CheckpointHold {
  readonly #runs = new Map<string, Holding>();
  readonly #write: (rows: HeldRows) => Promise<void>;
  readonly #onError: (error: unknown) => void;

  constructor(write: (rows: HeldRows) => Promise<void>, onError: (error: unknown) => void) {
    this.#write = write;
    this.#onError = onError;
  }

  /** From now on the run's root checkpoints and writes are held (see the file's comment). */
  start(runId: string): void {
    this.#runs.set(runId, { threadId: undefined, rows: new HeldRows(), timer: undefined, writing: undefined });
  }

  holding(runId: unknown): boolean {
    return typeof runId === 'string' && this.#runs.has(runId);
  }

  /** Holds rows of a holding run (written with the others, at the latest HOLD_MS from the first). */
  async hold(runId: string, threadId: string, rows: HeldRow[]): Promise<void> {
    const holding = this.#runs.get(runId);
    if (!holding) return this.#write(HeldRows.of(rows));
    holding.threadId = threadId;
    for (const row of rows) holding.rows.add(row);
    if (!holding.timer) {
      holding.timer = setTimeout(() => void this.flush(runId).catch(this.#onError), HOLD_MS);
      holding.timer.unref();
    }
  }

  /** Writes what the run holds now. A failed write keeps the rows held. */
  async flush(runId: string): Promise<void> {
    const holding = this.#runs.get(runId);
    if (!holding) return;
    while (holding.writing) await holding.writing.catch(() => undefined);
    clearTimeout(holding.timer);
    holding.timer = undefined;
    if (holding.rows.empty) return;
    const rows = holding.rows;
    holding.rows = new HeldRows();
    holding.writing = this.#write(rows).catch((error) => {
      holding.rows = rows.followedBy(holding.rows);
      throw error;
    }).finally(() => {
      holding.writing = undefined;
    });
    await holding.writing;
  }

  /** Writes what any holding run of the thread holds (before a read of the thread). */
  async flushThread(threadId: string): Promise<void> {
    for (const [runId, holding] of this.#runs) {
      if (holding.threadId === threadId && (!holding.rows.empty || holding.writing)) await this.flush(runId);
    }
  }

  /** Ends holding for the run and hands over what it holds, for its end statement to write. */
  async release(runId: string): Promise<HeldRows | undefined> {
    const holding = this.#runs.get(runId);
    if (!holding) return undefined;
    while (holding.writing) await holding.writing.catch(() => undefined);
    this.#runs.delete(runId);
    clearTimeout(holding.timer);
    return holding.rows.empty ? undefined : holding.rows;
  }

  /** Ends holding for the run, writing what it holds. */
  async stop(runId: string): Promise<void> {
    try {
      await this.flush(runId);
    } finally {
      clearTimeout(this.#runs.get(runId)?.timer);
      this.#runs.delete(runId);
    }
  }
}
