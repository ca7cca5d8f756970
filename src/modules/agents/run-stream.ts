// Turns one graph execution into the agent server's stream events (the SSE vocabulary of the official
// servers): `metadata` first, then one event per chunk of each requested stream mode, namespaced with
// `|ns` for subgraphs. Plain `graph.stream` serves most modes; `events` and `messages` need the callback
// event stream, which costs more, so it is used only when they are asked for.
import type { RunnableGraph } from './graphs.ts';
import type { RunRow } from './repo/runs.ts';

export interface StreamEvent {
  event: string;
  data: unknown;
}

export interface ExecutionOutcome {
  /** The last full state the graph streamed (what `wait` and `join` answer). */
  values: unknown;
  /** Nodes due after the last checkpoint of the root graph; empty when the run went to the end. */
  next: string[] | undefined;
  /** `values` as JSON, when it was serialized already (streamed). */
  valuesJson: string | undefined;
}

function isMessage(value: any): boolean {
  return value !== null && typeof value === 'object' && typeof value.toDict === 'function' && typeof value._getType === 'function';
}

/** `toDict()` as the answer carries it: its data (toJSON's kwargs) with its type beside. */
function dictOf(message: any, serialized: any): Record<string, unknown> {
  if (serialized?.lc === 1 && serialized.kwargs && typeof message.getType === 'function') return { ...serialized.kwargs, type: message.getType() };
  const { type, data } = message.toDict();
  return { ...data, type };
}

/**
 * Messages become their dict form ({type, content, …}), as the official servers send them. JSON.stringify
 * calls a message's toJSON before the replacer sees it, and toDict's data is that toJSON's kwargs: it is
 * used as is. `forms` (a run's final checkpoint's serialized forms, see DbCheckpointSaver.latestForms) lets
 * lists of messages skip toJSON altogether.
 */
export function serialize(value: unknown, forms?: WeakMap<object, unknown>): string {
  return JSON.stringify(value, function replacer(this: any, key: string, current: any) {
    const raw = this[key];
    if (isMessage(raw)) return dictOf(raw, current !== raw ? current : forms?.get(raw));
    if (forms && Array.isArray(current) && current.some(isMessage)) {
      return current.map((item) => (isMessage(item) && forms.has(item) ? dictOf(item, forms.get(item)) : item));
    }
    return current;
  });
}

function checkpointOf(config: any): Record<string, unknown> | null {
  const c = config?.configurable;
  if (!c?.thread_id || !c.checkpoint_id) return null;
  return { thread_id: c.thread_id, checkpoint_id: c.checkpoint_id, checkpoint_ns: c.checkpoint_ns || '', checkpoint_map: c.checkpoint_map ?? null };
}

function publicConfig(config: any): unknown {
  if (!config?.configurable) return config;
  const { callbacks: _callbacks, ...rest } = config;
  return { ...rest, configurable: Object.fromEntries(Object.entries(config.configurable).filter(([key]) => !key.startsWith('__'))) };
}

/** A checkpoint event as the official servers send it: checkpoint ids beside the configs, snake_case names. */
function checkpointEvent(payload: any): unknown {
  const { parentConfig, ...rest } = payload;
  return {
    ...rest,
    config: publicConfig(payload.config),
    parent_config: publicConfig(parentConfig),
    checkpoint: checkpointOf(payload.config),
    parent_checkpoint: checkpointOf(parentConfig),
  };
}

function commandFrom(command: RunRow['kwargs']['command'], Command: any): unknown {
  if (!command) return undefined;
  const goto = command.goto === undefined || command.goto === null
    ? undefined
    : (Array.isArray(command.goto) ? command.goto : [command.goto]).map((target: any) =>
      typeof target === 'string' ? target : target);
  return new Command({ resume: command.resume, update: command.update ?? undefined, goto });
}

export interface ExecuteOptions {
  graph: RunnableGraph;
  run: RunRow;
  /** Continue from the last checkpoint instead of the run's input (a retried run). */
  resume: boolean;
  signal: AbortSignal;
  Command: any;
  /** Returns the event's data as JSON when it serialized it (someone listens). */
  emit(event: StreamEvent): string | void;
}

export async function executeRun(options: ExecuteOptions): Promise<ExecutionOutcome> {
  const { graph, run, signal, emit } = options;
  const kwargs = run.kwargs;
  const requested = new Set(kwargs.stream_mode);
  const libModes = new Set<string>([...requested].filter((mode) => mode !== 'events' && mode !== 'messages-tuple' && mode !== 'messages'));
  if (requested.has('messages-tuple')) libModes.add('messages');
  libModes.add('values');
  // The last checkpoint tells whether the run went to the end, so the thread's state need not be read back.
  if (!kwargs.temporary) libModes.add('checkpoints');
  const configurable: Record<string, unknown> = { ...kwargs.config.configurable, thread_id: run.thread_id };
  if (kwargs.checkpoint_id) configurable.checkpoint_id = kwargs.checkpoint_id;
  if (kwargs.checkpoint) Object.assign(configurable, kwargs.checkpoint);
  const input = options.resume ? null : (kwargs.command ? commandFrom(kwargs.command, options.Command) : (kwargs.input ?? null));
  const streamOptions: Record<string, unknown> = {
    configurable,
    context: kwargs.context,
    tags: kwargs.config.tags,
    recursionLimit: kwargs.config.recursion_limit,
    metadata: { ...kwargs.config.metadata, run_id: run.run_id, run_attempt: run.attempt, graph_id: configurable.graph_id, assistant_id: run.assistant_id },
    interruptBefore: kwargs.interrupt_before,
    interruptAfter: kwargs.interrupt_after,
    subgraphs: kwargs.subgraphs,
    streamMode: [...libModes],
    signal,
    runId: run.run_id,
    ...(kwargs.durability ? { durability: kwargs.durability } : {}),
  };

  emit({ event: 'metadata', data: { run_id: run.run_id, attempt: run.attempt } });
  let values: unknown = null;
  let next: string[] | undefined;
  let valuesJson: string | undefined;

  const onChunk = (chunk: unknown) => {
    const [ns, mode, raw] = (kwargs.subgraphs ? chunk : [[], ...(chunk as unknown[])]) as [string[], string, any];
    let data: unknown = raw;
    if (mode === 'checkpoints' && requested.has('checkpoints')) data = checkpointEvent(raw);
    else if (mode === 'debug' && raw?.type === 'checkpoint') data = { ...raw, payload: checkpointEvent(raw.payload) };
    const suffix = kwargs.subgraphs && ns.length ? `|${ns.join('|')}` : '';
    const rootValues = mode === 'values' && !suffix;
    if (rootValues) {
      values = data;
      valuesJson = undefined;
    }
    if (mode === 'checkpoints' && !suffix) next = (raw as { next?: string[] }).next;
    if (mode === 'messages') {
      if (requested.has('messages-tuple')) emit({ event: `messages${suffix}`, data });
    } else if (requested.has(mode)) {
      const json = emit({ event: `${mode}${suffix}`, data });
      if (rootValues && typeof json === 'string') valuesJson = json;
    }
  };

  if (!requested.has('events') && !requested.has('messages')) {
    for await (const chunk of await graph.stream(input, streamOptions)) onChunk(chunk);
    return { values, next, valuesJson };
  }

  const partial = new Map<string, any>();
  const completed = new Set<string>();
  for await (const event of graph.streamEvents(input, { ...streamOptions, version: 'v2' })) {
    if (event.tags?.includes('langsmith:hidden')) continue;
    const own = event.event === 'on_chain_stream' && event.run_id === run.run_id;
    if (own) onChunk(event.data.chunk);
    else if (requested.has('events')) emit({ event: 'events', data: event });
    if (!requested.has('messages')) continue;
    if (own) {
      const chunk = kwargs.subgraphs ? event.data.chunk : [[], ...event.data.chunk];
      if (chunk[1] !== 'values' || chunk[0].length) continue;
      const state = chunk[2];
      const list = state && typeof state === 'object' && Array.isArray(state.messages) ? state.messages : [];
      const fresh = list.filter((message: any) => message?.id && !completed.has(message.id));
      for (const message of fresh) completed.add(message.id);
      if (fresh.length) emit({ event: 'messages/complete', data: fresh });
    } else if (event.event === 'on_chat_model_stream' && !event.tags?.includes('nostream')) {
      const message = event.data.chunk;
      if (!message?.id) continue;
      const known = partial.get(message.id);
      if (!known) {
        partial.set(message.id, message);
        emit({ event: 'messages/metadata', data: { [message.id]: { metadata: event.metadata } } });
      } else {
        partial.set(message.id, known.concat(message));
      }
      emit({ event: 'messages/partial', data: [partial.get(message.id)] });
    }
  }
  return { values, next, valuesJson };
}
