// Messages on the event bus about runs. A run's events travel pre-serialized as "seq\nevent\ndata" so
// that neither the worker nor the SSE writer encodes the same JSON twice.
import type { EventBus, PublishOptions } from '../../platform/events/event-bus.ts';

export const TOPIC_WAKE = 'agents:wake';
export const TOPIC_CANCEL = 'agents:cancel';
export const END_EVENT = '__end__';

/** Every event of every run of a thread (thread join-stream). */
export function threadTopic(threadId: string): string {
  return `thread:${threadId}`;
}

export function runTopic(runId: string): string {
  return `run:${runId}`;
}

/** Only the end of a run (what `wait` and `join` need): its events are not even serialized for them. */
export function runEndTopic(runId: string): string {
  return `run-end:${runId}`;
}

export interface EncodedEvent {
  seq: number;
  event: string;
  /** JSON text */
  data: string;
}

export function encodeEvent(seq: number, event: string, data: string): string {
  return `${seq}\n${event}\n${data}`;
}

export function decodeEvent(message: string): EncodedEvent {
  const first = message.indexOf('\n');
  const second = message.indexOf('\n', first + 1);
  return { seq: Number(message.slice(0, first)), event: message.slice(first + 1, second), data: message.slice(second + 1) };
}

/** The end of a run: its status and the body `wait`/`join` answer with. */
export interface RunEnd {
  status: string;
  /** JSON text */
  result: string;
}

/**
 * A run's end message: "seq\n__end__\nstatus\nresult". The result (the run's final values, often large)
 * travels as the JSON text it is, not escaped inside another JSON document.
 */
function encodeEnd(end: RunEnd): string {
  return encodeEvent(-1, END_EVENT, `${end.status}\n${end.result}`);
}

/** Tells a run's end to its event listeners and to those waiting only for its end (wait, join). */
export function publishEnd(bus: EventBus, runId: string, end: RunEnd, options?: PublishOptions): void {
  const message = encodeEnd(end);
  bus.publish(runTopic(runId), message, options);
  bus.publish(runEndTopic(runId), message, options);
}

export function decodeEnd(event: EncodedEvent): RunEnd {
  const newline = event.data.indexOf('\n');
  return { status: event.data.slice(0, newline), result: event.data.slice(newline + 1) };
}
