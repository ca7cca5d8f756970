// Executes queued runs. Workers are woken through the event bus the moment a run is queued (in this
// process at once, in others through LISTEN/NOTIFY), claim runs with one UPDATE … SKIP LOCKED, hold a
// lease while they run, and give up a run whose lease lapsed (its process died) back to the queue,
// where the next attempt continues from the run's last checkpoint.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { EventBus } from '../../platform/events/event-bus.ts';
import { CoalescedDrain } from '../../platform/coalesced-drain.ts';
import type { CheckpointRow, DbCheckpointSaver } from './checkpointer.ts';
import type { GraphRegistry, RunnableGraph } from './graphs.ts';
import { executeRun, serialize } from './run-stream.ts';
import type { CancelAction, FinalThreadState, RunRepo, RunRow, RunStatus } from './repo/runs.ts';
import type { ThreadRepo } from './repo/threads.ts';
import { encodeEvent, publishEnd, runTopic, threadTopic, TOPIC_CANCEL, TOPIC_WAKE } from './run-events.ts';
import { webhookPayload, type WebhookDelivery } from './webhooks.ts';
import type { RunMetrics } from './metrics.ts';

export interface RunWorkerOptions {
  runs: RunRepo;
  threads: ThreadRepo;
  registry: GraphRegistry;
  checkpointer: DbCheckpointSaver;
  bus: EventBus;
  logger: Logger;
  /** Where finished runs' webhooks are recorded and delivered from (see webhooks.ts). */
  webhooks: { wake(): void; record(runId: string, delivery: WebhookDelivery): Promise<void> };
  metrics: RunMetrics;
  Command: any;
  concurrency: number;
  leaseSeconds: number;
  maxAttempts: number;
}

/** Event ids continue across attempts so that a resumed stream never reuses an id. */
const SEQ_PER_ATTEMPT = 1_000_000;

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string })?.code === '23505';
}

export function errorBody(error: unknown): { error: string; message: string } {
  if (error instanceof Error) return { error: error.name || 'Error', message: error.message };
  return { error: 'Error', message: typeof error === 'string' ? error : JSON.stringify(error) };
}

export async function threadStateOf(graph: RunnableGraph, threadId: string): Promise<Omit<FinalThreadState, 'status'> & { next: string[] }> {
  const state = await graph.getState({ configurable: { thread_id: threadId } });
  const interrupts: Record<string, unknown> = {};
  for (const task of state.tasks ?? []) {
    if (task.interrupts?.length) interrupts[task.id] = task.interrupts;
  }
  return { values: JSON.parse(serialize(state.values ?? {})), interrupts, next: state.next ?? [] };
}

export class RunWorker {
  readonly id = `worker-${randomUUID()}`;
  readonly #o: RunWorkerOptions;
  readonly #active = new Map<string, AbortController>();
  readonly #finishing = new Set<Promise<void>>();
  #reserved = 0;
  /** Runs may be waiting that this worker had no room for when told about them: look again when a run ends. */
  #backlog = false;
  readonly #drain = new CoalescedDrain(() => this.#claimUntilFull(), (error) => this.#o.logger.error({ err: error }, 'run claim failed'));
  #stopped = false;
  #timers: NodeJS.Timeout[] = [];
  #delayed: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void)[] = [];

  constructor(options: RunWorkerOptions) {
    this.#o = options;
  }

  get activeRuns(): number {
    return this.#active.size;
  }

  async start(): Promise<void> {
    const { bus, leaseSeconds } = this.#o;
    this.#unsubscribe.push(bus.subscribe(TOPIC_WAKE, (message) => {
      const delay = Number(message);
      if (delay > 0) this.#wakeAfter(delay);
      else this.wake();
    }));
    this.#unsubscribe.push(bus.subscribe(TOPIC_CANCEL, (message) => {
      const [runId, action] = message.split('\n');
      this.#active.get(runId!)?.abort(action);
    }));
    this.#timers.push(setInterval(() => this.#heartbeat(), Math.max(250, (leaseSeconds * 1000) / 3)));
    this.#timers.push(setInterval(() => this.#recover(), Math.max(500, (leaseSeconds * 1000) / 2)));
    for (const timer of this.#timers) timer.unref();
    await this.#recover();
    const delay = await this.#o.runs.nextAvailableIn();
    if (delay !== undefined) this.#wakeAfter(delay);
    this.wake();
  }

  /**
   * Reserves a slot for a run the API is about to queue in this process: the run is inserted already
   * owned by this worker and starts without a claim round trip (see adopt).
   */
  tryReserve(): boolean {
    if (this.#stopped || this.#active.size + this.#reserved >= this.#o.concurrency) return false;
    this.#reserved++;
    return true;
  }

  unreserve(): void {
    this.#reserved = Math.max(0, this.#reserved - 1);
  }

  /** Starts a run inserted as running and owned by this worker (after tryReserve). */
  adopt(run: RunRow, firstCheckpoint?: CheckpointRow | null): void {
    this.unreserve();
    if (firstCheckpoint !== undefined) this.#o.checkpointer.prime(run.run_id, run.thread_id, firstCheckpoint);
    this.#launch(run);
  }

  /** Claims runs until this worker is full or the queue is empty. */
  wake(): void {
    if (!this.#stopped) this.#drain.wake();
  }

  async #claimUntilFull(): Promise<void> {
    while (!this.#stopped && this.#active.size + this.#reserved < this.#o.concurrency) {
      let run: RunRow | undefined;
      try {
        run = await this.#o.runs.claim(this.id, this.#o.leaseSeconds);
      } catch (error) {
        // Another worker claimed a run of the same thread at the same moment: look again.
        if (isUniqueViolation(error)) {
          this.#drain.wake();
          break;
        }
        this.#o.logger.error({ err: error }, 'run claim failed');
        break;
      }
      if (!run) {
        // A queued run may be waiting for one of ours to end (one run per thread at a time).
        this.#backlog = this.#active.size > 0;
        break;
      }
      this.#launch(run);
    }
    if (!this.#stopped && this.#active.size + this.#reserved >= this.#o.concurrency) this.#backlog = true;
  }

  #wakeAfter(seconds: number): void {
    if (this.#delayed) clearTimeout(this.#delayed);
    this.#delayed = setTimeout(async () => {
      this.#delayed = undefined;
      this.wake();
      const next = await this.#o.runs.nextAvailableIn().catch(() => undefined);
      if (next !== undefined) this.#wakeAfter(next);
    }, Math.max(0, seconds * 1000) + 5);
    this.#delayed.unref();
  }

  async #heartbeat(): Promise<void> {
    const ids = [...this.#active.keys()];
    if (ids.length === 0) return;
    try {
      const rows = await this.#o.runs.heartbeat(this.id, ids, this.#o.leaseSeconds);
      for (const row of rows) if (row.cancel_action) this.#active.get(row.run_id)?.abort(row.cancel_action);
      // A run missing from the answer was taken from this worker (lease lapsed): stop working on it.
      const alive = new Set(rows.map((row) => row.run_id));
      for (const id of ids) if (!alive.has(id)) this.#active.get(id)?.abort('lost');
    } catch (error) {
      this.#o.logger.warn({ err: error }, 'run heartbeat failed');
    }
  }

  async #recover(): Promise<void> {
    try {
      const { requeued, failed } = await this.#o.runs.recoverExpired(this.#o.maxAttempts);
      for (const runId of failed) {
        publishEnd(this.#o.bus, runId, { status: 'error', result: JSON.stringify({ __error__: { error: 'RunAttemptsExhausted', message: 'The run failed too many times' } }) });
      }
      if (requeued.length) {
        this.#o.logger.warn({ runs: requeued }, 'runs of a stopped worker queued again');
        this.wake();
      }
    } catch (error) {
      this.#o.logger.warn({ err: error }, 'run recovery failed');
    }
  }

  #launch(run: RunRow): void {
    const controller = new AbortController();
    this.#active.set(run.run_id, controller);
    // Looking for the next run costs a query: only when a run of the ended run's thread waits, or when a
    // queued run was announced that this worker could not take then (full, or blocked by a run of its own).
    // Runs adopted at creation announce nothing, so a steady stream of them claims nothing.
    const done = this.#execute(run, controller).catch((error) => {
      this.#o.logger.error({ err: error, run_id: run.run_id }, 'run bookkeeping failed');
      return true;
    }).then((queued) => {
      this.#o.checkpointer.forget(run.run_id).catch((error) => this.#o.logger.warn({ err: error, run_id: run.run_id }, 'writing a held checkpoint failed'));
      this.#active.delete(run.run_id);
      this.#finishing.delete(done);
      if (queued || this.#backlog) this.wake();
    });
    this.#finishing.add(done);
  }

  /** Runs one run to its end; true when runs of its thread wait for it. */
  async #execute(run: RunRow, controller: AbortController): Promise<boolean> {
    const { runs, threads, registry, checkpointer, bus, logger } = this.#o;
    const log = logger.child({ run_id: run.run_id, thread_id: run.thread_id, attempt: run.attempt });
    const topic = runTopic(run.run_id);
    const threadEvents = threadTopic(run.thread_id);
    const kwargs = run.kwargs;
    let seq = (run.attempt - 1) * SEQ_PER_ATTEMPT;
    let stored: Promise<unknown> = Promise.resolve();
    const emit = (event: { event: string; data: unknown }) => {
      const id = seq++;
      // Nobody streams this run (a `wait`, a background run): its events need not be serialized at all.
      if (!kwargs.resumable && !bus.listening(topic) && !bus.listening(threadEvents)) return;
      const data = serialize(event.data);
      const encoded = encodeEvent(id, event.event, data);
      const publish = () => {
        bus.publish(topic, encoded, { onlyIfAnnounced: true });
        bus.publish(threadEvents, encoded, { onlyIfAnnounced: true });
      };
      if (!kwargs.resumable) {
        publish();
        return data;
      }
      // Stored before it is published: a joiner listens first and then reads the log, so every event
      // reaches it from one side or the other (the SSE writer drops the ids it already sent).
      stored = stored.then(() => runs.appendEvents(run.run_id, [{ seq: id, event: event.event, data }])).catch((error) => {
        log.warn({ err: error, seq: id }, 'storing a resumable stream event failed');
      }).then(publish);
      return data;
    };
    const graphId = String(kwargs.config.configurable?.graph_id ?? '');
    const started = Date.now();
    let status: RunStatus = 'success';
    let values: unknown = null;
    let serializedValues: string | undefined;
    let next: string[] | undefined;
    let failure: { error: string; message: string } | undefined;
    let graph: RunnableGraph | undefined;
    try {
      graph = await registry.get(graphId, kwargs.config as Record<string, unknown>, { checkpointer: !kwargs.temporary });
      const resume = run.attempt > 1 && !kwargs.temporary
        && (await runs.hasCheckpoints(run.thread_id, run.run_id));
      // The run's checkpoints are written together, the last ones by its end statement (see CheckpointHold);
      // `durability: sync` asks for each to be written before the next step.
      if (!kwargs.temporary && kwargs.durability !== 'sync') checkpointer.holdCheckpoints(run.run_id);
      const outcome = await executeRun({ graph, run, resume, signal: controller.signal, Command: this.#o.Command, emit });
      values = outcome.values;
      next = outcome.next;
      serializedValues = outcome.valuesJson;
      if (controller.signal.aborted) status = 'interrupted';
    } catch (error) {
      if (controller.signal.aborted) {
        status = 'interrupted';
      } else {
        status = 'error';
        failure = errorBody(error);
        log.warn({ err: error }, 'run failed');
        emit({ event: 'error', data: failure });
      }
    }
    const reason = controller.signal.reason as CancelAction | 'lost' | undefined;
    // Another worker may own the run now: what this one holds must not land after that one's checkpoints.
    if (reason === 'lost') {
      await checkpointer.releaseHeld(run.run_id);
      return false;
    }

    const valuesJson = serializedValues ?? serialize(values, checkpointer.latestForms(run.run_id));
    let thread: FinalThreadState | undefined;
    if (kwargs.temporary) {
      thread = { values, valuesJson, interrupts: {}, status: status === 'error' ? 'error' : 'idle', error: failure };
    } else if (status === 'success' && next !== undefined && next.length === 0 && values !== null) {
      // The run went to the end: its last values are the thread's state, nothing is pending.
      thread = { values, valuesJson, interrupts: {}, status: 'idle' };
    } else if (graph) {
      if (reason === 'rollback') await checkpointer.deleteRunCheckpoints(run.thread_id, run.run_id);
      try {
        const state = await threadStateOf(graph, run.thread_id);
        const threadStatus = status === 'error' ? 'error' : (state.next.length ? 'interrupted' : 'idle');
        thread = { values: state.values, interrupts: state.interrupts, status: threadStatus, error: failure };
      } catch (error) {
        log.warn({ err: error }, 'reading the thread state after the run failed');
      }
    }
    // Every event is in the log (and on the bus) before the run reads as ended: a join that finds it ended
    // replays the whole log and stops.
    await stored;
    let queued = true;
    const webhook = run.webhook ? { url: run.webhook, payload: this.#webhookPayload(run, status, started, valuesJson, failure) } : undefined;
    if (reason === 'rollback') {
      await runs.delete(run.run_id);
      if (thread) await threads.setState(run.thread_id, { ...thread, status: thread.status === 'error' ? 'error' : thread.status });
      await runs.settleThread(run.thread_id);
      if (webhook) await this.#o.webhooks.record(run.run_id, webhook);
    } else {
      const held = await checkpointer.releaseHeld(run.run_id);
      const finished = await runs.finish(run.run_id, this.id, status, thread, { webhook, held });
      if (!finished.mine) return false;
      queued = finished.queued;
    }
    if (webhook) this.#o.webhooks.wake();
    // A stateless run's thread is gone by the time its caller hears the end.
    if (kwargs.temporary && kwargs.on_completion !== 'keep') {
      await threads.delete(run.thread_id).catch((error) => log.warn({ err: error }, 'deleting the temporary thread failed'));
    }
    const result = failure ? JSON.stringify({ __error__: failure }) : valuesJson;
    // Listeners elsewhere announced themselves; one that announced too late finds the run ended in storage.
    publishEnd(bus, run.run_id, { status, result }, { onlyIfAnnounced: true });
    this.#o.metrics.observe(status, (Date.now() - started) / 1000);
    log.debug({ status, run_ms: Date.now() - started }, 'run finished');
    return queued;
  }

  #webhookPayload(run: RunRow, status: RunStatus, started: number, valuesJson: string, failure: { error: string; message: string } | undefined): string {
    const { worker_id: _w, cancel_action: _c, attempt: _a, ...publicRun } = run;
    return webhookPayload({
      ...publicRun, status, run_started_at: new Date(started).toISOString(), run_ended_at: new Date().toISOString(),
      ...(failure ? { error: failure } : {}),
    }, valuesJson);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const timer of this.#timers) clearInterval(timer);
    if (this.#delayed) clearTimeout(this.#delayed);
    for (const unsubscribe of this.#unsubscribe) unsubscribe();
    // Runs in flight go back to the queue; another worker (or this server after a restart) resumes them.
    const ids = [...this.#active.keys()];
    for (const controller of this.#active.values()) controller.abort('lost');
    await Promise.allSettled([...this.#finishing]);
    await this.#o.runs.release(this.id, ids).catch((error) => this.#o.logger.warn({ err: error }, 'releasing runs failed'));
    if (ids.length) this.#o.bus.publish(TOPIC_WAKE, '0');
  }
}
