// Build output goes to the database as it happens (batched), so logs can be read while a build runs
// and survive the process that wrote them.
import type { ControlPlaneRepo } from '../repo.ts';

export type LogLevel = 'info' | 'error' | 'warning';

export class BuildLog {
  readonly #repo: ControlPlaneRepo;
  readonly #revisionId: string;
  #nextSeq: number;
  #pending: { level: string; message: string }[] = [];
  #flushing: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;

  private constructor(repo: ControlPlaneRepo, revisionId: string, nextSeq: number) {
    this.#repo = repo;
    this.#revisionId = revisionId;
    this.#nextSeq = nextSeq;
  }

  /** Continues after the last line already stored (a restarted build appends, never overwrites). */
  static async open(repo: ControlPlaneRepo, revisionId: string): Promise<BuildLog> {
    return new BuildLog(repo, revisionId, (await repo.lastLogSeq(revisionId)) + 1);
  }

  write(level: LogLevel, message: string): void {
    // One stored line per output line; very long lines are cut so one line cannot flood the table.
    for (const line of message.split(/\r?\n/)) {
      if (line.trim() === '') continue;
      this.#pending.push({ level, message: line.length > 8000 ? `${line.slice(0, 8000)}…` : line });
    }
    if (this.#pending.length >= 200) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), 200);
  }

  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const lines = this.#pending;
    this.#pending = [];
    const first = this.#nextSeq;
    this.#nextSeq += lines.length;
    this.#flushing = this.#flushing.then(() => this.#repo.appendLogs(this.#revisionId, first, lines)).catch(() => undefined);
    return this.#flushing;
  }
}
