// Runs: creation with the multitask strategies (atomically, under the thread's row lock), waiting,
// streaming and joining through the event bus, cancellation.
import { randomUUID } from 'node:crypto';
import { AppError, notFound, unprocessable } from '../../platform/errors.ts';
import type { Db } from '../../platform/db/index.ts';
import type { EventBus } from '../../platform/events/event-bus.ts';
import type { AssistantService } from './assistants.ts';
import type { CheckpointRow, DbCheckpointSaver } from './checkpointer.ts';
import { decodeEvent, END_EVENT, publishEnd, runEndTopic, runTopic, threadTopic, TOPIC_CANCEL, TOPIC_WAKE, type EncodedEvent } from './run-events.ts';
import { RunRepo, type CancelAction, type MultitaskStrategy, type RunKwargs, type RunRow, type RunStatus } from './repo/runs.ts';
import { inTransaction } from './repo/sql.ts';
import type { ThreadRepo } from './repo/threads.ts';

export interface RunCreate {
  assistant_id: string;
  input?: unknown;
  command?: RunKwargs['command'];
  checkpoint_id?: string;
  checkpoint?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  config?: { configurable?: Record<string, unknown>; tags?: string[]; recursion_limit?: number; [key: string]: unknown };
  context?: Record<string, unknown>;
  webhook?: string;
  interrupt_before?: string[] | '*';
  interrupt_after?: string[] | '*';
  on_disconnect?: 'cancel' | 'continue';
  multitask_strategy?: MultitaskStrategy;
  stream_mode?: string | string[];
  stream_subgraphs?: boolean;
  stream_resumable?: boolean;
  after_seconds?: number;
  if_not_exists?: 'reject' | 'create';
  on_completion?: 'delete' | 'keep';
  feedback_keys?: string[];
  durability?: string;
  checkpoint_during?: boolean;
}

export const REJECT_MESSAGE = 'Thread is already running a task. Wait for it to finish or choose a different multitask strategy.';
const TERMINAL: RunStatus[] = ['success', 'error', 'timeout', 'interrupted'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Buffers a run's events from the moment of subscription; ends with the run's end message. */
export class RunListener {
  readonly #queue: EncodedEvent[] = [];
  readonly #bus: EventBus;
  readonly #topic: string;
  #wake: (() => void) | undefined;
  #unsubscribe: () => void;
  #withdraw: (() => void) | undefined;
  end: EncodedEvent | undefined;

  constructor(bus: EventBus, runId: string, topic = runTopic(runId)) {
    this.#bus = bus;
    this.#topic = topic;
    this.#unsubscribe = bus.subscribe(this.#topic, (message) => {
      const event = decodeEvent(message);
      if (event.event === END_EVENT) this.end = event;
      else this.#queue.push(event);
      this.#wake?.();
    });
  }

  /** The next event, `undefined` at the end, or `'timeout'` when nothing came within ms. */
  async next(ms: number): Promise<EncodedEvent | undefined | 'timeout'> {
    for (;;) {
      const event = this.#queue.shift();
      if (event) return event;
      if (this.end) return undefined;
      const woke = await this.#wakeOrTimeout(ms);
      if (!woke) return 'timeout';
    }
  }

  /** True when woken by an event or the end, false when ms passed first. */
  async #wakeOrTimeout(ms: number): Promise<boolean> {
    const woke = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
    this.#wake = undefined;
    return woke;
  }

  /** Resolves true once the run ended, false after ms. */
  async ended(ms: number): Promise<boolean> {
    while (!this.end) {
      this.#queue.length = 0;
      const woke = await this.#wakeOrTimeout(ms);
      if (!woke) return false;
    }
    return true;
  }

  /** Asks other processes for this run's events (needed unless the run executes in this process). */
  async announce(): Promise<void> {
    if (!this.#withdraw) this.#withdraw = await this.#bus.announce(this.#topic);
  }

  close(): void {
    this.#unsubscribe();
    this.#withdraw?.();
  }
}

/** The worker of this process, for runs the API can start here at once. */
export interface LocalRunner {
  readonly id: string;
  readonly leaseSeconds: number;
  tryReserve(): boolean;
  unreserve(): void;
  /** `firstCheckpoint`: the thread's latest checkpoint when read with the insert (null: it has none). */
  adopt(run: RunRow, firstCheckpoint?: CheckpointRow | null): void;
}

export class RunService {
  readonly repo: RunRepo;
  readonly #db: Db;
  readonly #bus: EventBus;
  readonly #assistants: AssistantService;
  readonly #threads: ThreadRepo;
  readonly #checkpointer: DbCheckpointSaver;
  local: LocalRunner | undefined;
  /** langgraph.json http.disable_webhooks turns them off. */
  webhooksEnabled = true;

  constructor(options: { db: Db; bus: EventBus; assistants: AssistantService; threads: ThreadRepo; checkpointer: DbCheckpointSaver }) {
    this.#db = options.db;
    this.repo = new RunRepo(options.db);
    this.#bus = options.bus;
    this.#assistants = options.assistants;
    this.#threads = options.threads;
    this.#checkpointer = options.checkpointer;
  }

  listen(runId: string): RunListener {
    return new RunListener(this.#bus, runId);
  }

  /** Only the end of a run (wait, join, cancel with wait). */
  listenEnd(runId: string): RunListener {
    return new RunListener(this.#bus, runId, runEndTopic(runId));
  }

  /** Events of every run of a thread, from now on. */
  listenThread(threadId: string): RunListener {
    return new RunListener(this.#bus, '', threadTopic(threadId));
  }

  /**
   * Queues a run. With a thread id the multitask strategy applies under the thread's row lock; without
   * one the run gets a temporary thread (a stateless run). `listener` subscribes before the insert so
   * that not one event is missed.
   */
  async create(threadId: string | undefined, body: RunCreate, options: { listen?: 'events' | 'end'; runId?: string } = {}): Promise<{ run: RunRow; listener?: RunListener }> {
    const assistant = await this.#assistants.getForRun(body.assistant_id);
    const runId = options.runId ?? randomUUID();
    const stateless = threadId === undefined;
    const targetThread = threadId ?? randomUUID();
    const streamMode = body.stream_mode === undefined ? ['values'] : (Array.isArray(body.stream_mode) ? body.stream_mode : [body.stream_mode]);
    const configurable = {
      ...assistant.config.configurable,
      ...body.config?.configurable,
      graph_id: assistant.graph_id,
      assistant_id: assistant.assistant_id,
      run_id: runId,
      thread_id: targetThread,
      user_id: undefined,
    };
    const kwargs: RunKwargs = {
      input: body.input,
      command: body.command ?? undefined,
      config: { ...assistant.config, ...body.config, configurable, metadata: { ...body.metadata } },
      context: { ...assistant.context, ...body.context },
      stream_mode: streamMode,
      interrupt_before: body.interrupt_before,
      interrupt_after: body.interrupt_after,
      subgraphs: body.stream_subgraphs ?? false,
      resumable: body.stream_resumable ?? false,
      temporary: stateless && body.on_completion !== 'keep',
      on_completion: stateless ? (body.on_completion ?? 'delete') : undefined,
      checkpoint_id: body.checkpoint_id,
      checkpoint: body.checkpoint,
      feedback_keys: body.feedback_keys,
      webhook: body.webhook,
      durability: body.durability ?? (body.checkpoint_during === false ? 'exit' : undefined),
      on_disconnect: body.on_disconnect ?? 'continue',
    };
    const newRun = {
      run_id: runId,
      thread_id: targetThread,
      assistant_id: assistant.assistant_id,
      metadata: body.metadata ?? {},
      kwargs,
      multitask_strategy: body.multitask_strategy ?? 'reject',
      after_seconds: body.after_seconds ?? 0,
      webhook: this.webhooksEnabled ? (body.webhook ?? null) : null,
    };
    const listener = options.listen === 'events' ? this.listen(runId) : options.listen === 'end' ? this.listenEnd(runId) : undefined;
    // A run that can start at once starts in this process, inserted already owned by its worker.
    const reserved = newRun.after_seconds === 0 && this.local?.tryReserve() === true;
    let adopted = false;
    const ownedBy = () => (adopted ? { workerId: this.local!.id, leaseSeconds: this.local!.leaseSeconds } : undefined);
    try {
      let cancelled: string[] = [];
      let ended: string[] = [];
      let run: RunRow;
      let firstCheckpoint: CheckpointRow | null | undefined;
      if (stateless) {
        adopted = reserved;
        if (listener && !adopted) await listener.announce();
        run = await this.repo.insert(newRun, { createThread: { graph_id: assistant.graph_id, assistant_id: assistant.assistant_id }, ownedBy: ownedBy() });
      } else {
        if (!UUID.test(targetThread)) throw notFound(`Thread with ID ${targetThread} not found`);
        // Fast path: an idle thread takes the run in one statement, whatever the strategy. A run that starts
        // here from the thread's latest checkpoint gets that checkpoint from the same statement.
        let fast: Awaited<ReturnType<RunRepo['insertIfIdle']>>;
        if (newRun.after_seconds === 0) {
          adopted = reserved;
          if (listener && !adopted) await listener.announce();
          const readLatestCheckpoint = adopted && !kwargs.checkpoint_id && !kwargs.checkpoint;
          fast = await this.repo.insertIfIdle(newRun, ownedBy(), { readLatestCheckpoint }).catch((error) => {
            // A run still running on a thread marked idle (a stale status): the full path sorts it out.
            if ((error as { code?: string }).code === '23505') return undefined;
            throw error;
          });
          if (!fast) adopted = false;
        }
        if (fast) {
          const { latest_checkpoint: latest, ...row } = fast;
          run = row;
          if (latest !== undefined) firstCheckpoint = latest;
        }
        else ({ run, cancelled, ended } = await inTransaction(this.#db, async (tx) => {
          let thread = await this.#threads.lock(targetThread, tx);
          if (!thread) {
            if (body.if_not_exists !== 'create') throw notFound(`Thread with ID ${targetThread} not found`);
            thread = await this.#threads.insert(targetThread, {}, tx);
          }
          const inflight = await this.repo.inflight(targetThread, tx);
          let outcome = { running: [] as string[], ended: [] as string[] };
          if (inflight.length > 0) {
            const strategy = newRun.multitask_strategy;
            if (strategy === 'reject') throw unprocessable(REJECT_MESSAGE);
            if (strategy === 'interrupt' || strategy === 'rollback') {
              outcome = await this.repo.requestCancel(inflight.map((r) => r.run_id), strategy, tx);
            }
          }
          adopted = reserved && inflight.length === 0;
          // Another process may execute it: ask for its events before it can start.
          if (listener && !adopted) await listener.announce();
          return { run: await this.repo.insert(newRun, { ownedBy: ownedBy() }, tx), cancelled: outcome.running, ended: outcome.ended };
        }));
      }
      for (const id of cancelled) this.#bus.publish(TOPIC_CANCEL, `${id}\n${newRun.multitask_strategy}`);
      this.#endCancelled(ended);
      if (adopted) this.local!.adopt(run, firstCheckpoint);
      else {
        if (reserved) this.local!.unreserve();
        this.#bus.publish(TOPIC_WAKE, String(newRun.after_seconds));
      }
      return { run, listener };
    } catch (error) {
      if (reserved) this.local!.unreserve();
      listener?.close();
      throw error;
    }
  }

  async get(runId: string, threadId?: string): Promise<RunRow> {
    const run = UUID.test(runId) && (!threadId || UUID.test(threadId)) ? await this.repo.get(runId, threadId) : undefined;
    if (!run) throw notFound('Run not found');
    return run;
  }

  async threadExists(threadId: string): Promise<boolean> {
    return UUID.test(threadId) && (await this.#threads.get(threadId)) !== undefined;
  }

  isTerminal(run: RunRow): boolean {
    return TERMINAL.includes(run.status);
  }

  /** The answer of `join` for a finished run: the thread's values. */
  async finishedResult(run: RunRow): Promise<string> {
    const thread = await this.#threads.get(run.thread_id);
    if (run.status === 'error' && thread?.error) return JSON.stringify({ __error__: thread.error });
    return JSON.stringify(thread?.values ?? null);
  }

  async cancel(runIds: string[], action: CancelAction): Promise<void> {
    const { running, ended } = await this.repo.requestCancel(runIds, action);
    for (const id of running) this.#bus.publish(TOPIC_CANCEL, `${id}\n${action}`);
    this.#endCancelled(ended);
  }

  /** Pending runs cancelled before they started: tell their listeners. */
  #endCancelled(runIds: string[]): void {
    for (const id of runIds) {
      publishEnd(this.#bus, id, { status: 'interrupted', result: 'null' });
    }
  }

  async delete(runId: string, threadId?: string): Promise<void> {
    const run = await this.get(runId, threadId);
    if (run.status === 'running') throw new AppError('conflict', 'Cannot delete a running run: cancel it first');
    await this.repo.delete(runId, threadId);
    if (run.status === 'pending') await this.repo.settleThread(run.thread_id);
  }

  async deleteRunWork(threadId: string, runId: string): Promise<void> {
    await this.#checkpointer.deleteRunCheckpoints(threadId, runId);
  }
}
