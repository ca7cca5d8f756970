// Token counts and costs, taken from where the langsmith SDK puts them: `usage_metadata` in the outputs of
// an LLM run, or in `extra.metadata.usage_metadata`; older integrations use `llm_output.token_usage`.
import type { RunValues } from './run-op.ts';
import { normalizeTime } from './times.ts';

export interface Usage {
  total_tokens?: number;
  prompt_tokens?: number;
  completion_tokens?: number;
  total_cost?: number;
  prompt_cost?: number;
  completion_cost?: number;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= Number.MAX_SAFE_INTEGER ? Math.round(value) : undefined;
}

function cost(value: unknown): number | undefined {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) && number >= 0 ? number : undefined;
}

/** Usage of an LLM run (or of a run whose type is not known yet, e.g. a bare patch); nothing for chains. */
export function extractUsage(values: RunValues): Usage {
  if (values.run_type !== undefined && values.run_type !== 'llm') return {};
  const outputs = record(values.outputs);
  const metadata = record(record(values.extra)?.metadata);
  const usage = record(outputs?.usage_metadata) ?? record(metadata?.usage_metadata);
  const result: Usage = {};
  if (usage) {
    result.prompt_tokens = count(usage.input_tokens);
    result.completion_tokens = count(usage.output_tokens);
    result.total_tokens = count(usage.total_tokens);
    result.prompt_cost = cost(usage.input_cost);
    result.completion_cost = cost(usage.output_cost);
    result.total_cost = cost(usage.total_cost);
  } else {
    const legacy = record(record(outputs?.llm_output)?.token_usage);
    if (!legacy) return {};
    result.prompt_tokens = count(legacy.prompt_tokens);
    result.completion_tokens = count(legacy.completion_tokens);
    result.total_tokens = count(legacy.total_tokens);
  }
  if (result.total_tokens === undefined && (result.prompt_tokens !== undefined || result.completion_tokens !== undefined)) {
    result.total_tokens = (result.prompt_tokens ?? 0) + (result.completion_tokens ?? 0);
  }
  if (result.total_cost === undefined && (result.prompt_cost !== undefined || result.completion_cost !== undefined)) {
    result.total_cost = (result.prompt_cost ?? 0) + (result.completion_cost ?? 0);
  }
  for (const key of Object.keys(result) as (keyof Usage)[]) if (result[key] === undefined) delete result[key];
  return result;
}

/** Time of the first streamed token: the first `new_token` event. */
export function firstTokenTime(events: unknown): string | undefined {
  if (!Array.isArray(events)) return undefined;
  let first: string | undefined;
  for (const event of events) {
    const entry = record(event);
    if (entry?.name !== 'new_token') continue;
    const time = normalizeTime(entry.time);
    if (time && (first === undefined || time < first)) first = time;
  }
  return first;
}
