// Run ingestion rules: merge the operations of one request by run id, complete lineage from stored runs,
// resolve projects (created on first use by name), then write every acceptable run in one statement.
//
// A request with some unacceptable runs keeps the good ones and answers 422 naming the bad ones: the SDK
// neither retries nor splits a batch after a 4xx, so rejecting it whole would lose every good run with it.
import { InputValidationError } from '../../platform/errors.ts';
import type { ValidationIssue } from '../../platform/http/validation/pydantic.ts';
import { DEFAULT_PROJECT, type RunOp, type RunValues } from './ingest/run-op.ts';
import { toDottedStamp } from './ingest/times.ts';
import type { RunsRepo, RunWrite } from './runs-repo.ts';
import type { SessionsRepo } from './sessions-repo.ts';

interface Merged {
  post?: RunOp;
  patch?: RunOp;
}

/** Projects by name change rarely; caching their ids keeps ingestion at one statement per request. */
class ProjectCache {
  readonly #entries = new Map<string, { id: string; expires: number }>();
  get(tenantId: string, name: string): string | undefined {
    const hit = this.#entries.get(`${tenantId}\u0000${name}`);
    return hit && hit.expires > Date.now() ? hit.id : undefined;
  }
  set(tenantId: string, name: string, id: string): void {
    if (this.#entries.size > 10_000) this.#entries.clear();
    this.#entries.set(`${tenantId}\u0000${name}`, { id, expires: Date.now() + 30_000 });
  }
  clear(): void {
    this.#entries.clear();
  }
}

export class IngestService {
  readonly #runs: RunsRepo;
  readonly #sessions: SessionsRepo;
  readonly #projects = new ProjectCache();

  constructor(runs: RunsRepo, sessions: SessionsRepo) {
    this.#runs = runs;
    this.#sessions = sessions;
  }

  /** Forgets cached project ids (after a project is deleted). */
  forgetProjects(): void {
    this.#projects.clear();
  }

  /**
   * Stores the acceptable operations; throws InputValidationError listing `issues` plus any found here,
   * after the good runs are stored.
   */
  async ingest(tenantId: string, ops: readonly RunOp[], issues: ValidationIssue[] = []): Promise<{ stored: number }> {
    const byId = new Map<string, Merged>();
    for (const op of ops) {
      const entry = byId.get(op.values.id) ?? {};
      const previous = entry[op.kind];
      entry[op.kind] = previous ? combine(previous, op, op.kind) : op;
      byId.set(op.values.id, entry);
    }
    const candidates = [...byId.values()].map(mergeEntry);
    await this.#completeLineage(tenantId, candidates, issues);
    const good = candidates.filter((candidate) => !candidate.rejected);
    let projectIssues: ValidationIssue[] = [];
    let writes = await this.#resolveProjects(tenantId, good, projectIssues);
    try {
      await this.#runs.upsert(tenantId, writes);
    } catch (error) {
      // A project deleted (here or by another process) while its id was cached: resolve again once.
      if ((error as { code?: string }).code !== '23503') throw error;
      this.#projects.clear();
      projectIssues = [];
      writes = await this.#resolveProjects(tenantId, good, projectIssues);
      await this.#runs.upsert(tenantId, writes);
    }
    issues.push(...projectIssues);
    if (issues.length > 0) throw new InputValidationError(issues);
    return { stored: writes.length };
  }

  async #completeLineage(tenantId: string, candidates: Candidate[], issues: ValidationIssue[]): Promise<void> {
    const inBatch = new Map(candidates.map((candidate) => [candidate.values.id, candidate]));
    const lookup = new Set<string>();
    for (const candidate of candidates) {
      const { values } = candidate;
      if (values.dotted_order === undefined && values.parent_run_id) lookup.add(values.parent_run_id);
      if (values.dotted_order === undefined || (!candidate.posted && candidate.sessionName === undefined && candidate.sessionId === undefined)) lookup.add(values.id);
    }
    const stored = await this.#runs.lineage(tenantId, [...lookup]);
    for (const candidate of candidates) {
      const { values } = candidate;
      const existing = stored.get(values.id);
      if (!candidate.posted && candidate.sessionName === undefined && candidate.sessionId === undefined && existing) {
        candidate.sessionId = existing.session_id;
      }
      if (values.dotted_order !== undefined) continue;
      if (existing) {
        // A patch of a stored run: its lineage is already there.
        Object.assign(values, { dotted_order: existing.dotted_order, trace_id: existing.trace_id, parent_run_ids: existing.parent_run_ids, start_time: values.start_time ?? existing.start_time });
        values.parent_run_id = existing.parent_run_ids.at(-1) ?? null;
        continue;
      }
      const parentId = values.parent_run_id;
      const parent = parentId ? (inBatch.get(parentId)?.values.dotted_order ? inBatch.get(parentId)!.values : stored.get(parentId)) : undefined;
      if (!parentId || !parent || values.start_time === undefined) {
        candidate.rejected = true;
        const msg = !values.start_time
          ? `Run ${values.id} is not stored yet, so this update needs start_time and dotted_order`
          : `Parent run ${parentId} is not stored: send dotted_order, or post the parent first`;
        issues.push({ type: 'value_error', loc: [...candidate.loc, 'dotted_order'], msg, input: null });
        continue;
      }
      values.dotted_order = `${parent.dotted_order}.${toDottedStamp(values.start_time)}Z${values.id}`;
      if (values.trace_id && values.trace_id !== parent.trace_id) {
        candidate.rejected = true;
        issues.push({ type: 'value_error', loc: [...candidate.loc, 'trace_id'], msg: `trace_id must be the trace of parent run ${parentId} (${parent.trace_id})`, input: values.trace_id });
        continue;
      }
      values.trace_id = parent.trace_id;
      values.parent_run_ids = [...(parent.parent_run_ids ?? []), parentId];
    }
  }

  async #resolveProjects(tenantId: string, candidates: Candidate[], issues: ValidationIssue[]): Promise<RunWrite[]> {
    const names = new Set<string>();
    const ids = new Set<string>();
    for (const candidate of candidates) {
      if (candidate.sessionId) ids.add(candidate.sessionId);
      else {
        const name = candidate.sessionName ?? DEFAULT_PROJECT;
        if (this.#projects.get(tenantId, name) === undefined) names.add(name);
      }
    }
    if (names.size > 0) {
      for (const [name, id] of await this.#sessions.ensureByName(tenantId, [...names])) this.#projects.set(tenantId, name, id);
    }
    const known = ids.size > 0 ? await this.#sessions.existing(tenantId, [...ids]) : new Set<string>();
    const writes: RunWrite[] = [];
    for (const candidate of candidates) {
      const sessionId = candidate.sessionId ?? this.#projects.get(tenantId, candidate.sessionName ?? DEFAULT_PROJECT);
      if (!sessionId || (candidate.sessionId && !known.has(sessionId))) {
        issues.push({ type: 'value_error', loc: [...candidate.loc, 'session_id'], msg: `Project ${candidate.sessionId} not found`, input: candidate.sessionId ?? null });
        continue;
      }
      const write: RunWrite = { values: candidate.values, sessionId, posted: candidate.posted, patched: candidate.patched };
      if (candidate.attachments) write.attachments = candidate.attachments;
      writes.push(write);
    }
    return writes;
  }
}

interface Candidate {
  values: RunValues;
  posted: boolean;
  patched: boolean;
  sessionName?: string;
  sessionId?: string;
  loc: (string | number)[];
  attachments?: RunOp['attachments'];
  rejected?: boolean;
}

/** Two operations of the same kind and id in one request: the later one's given fields win. */
function combine(earlier: RunOp, later: RunOp, kind: RunOp['kind']): RunOp {
  const values = { ...earlier.values, ...defined(later.values) };
  if (earlier.values.extra && later.values.extra) values.extra = { ...earlier.values.extra, ...later.values.extra };
  const op: RunOp = { kind, values, loc: later.loc };
  const sessionName = later.sessionName ?? earlier.sessionName;
  const sessionId = later.sessionId ?? earlier.sessionId;
  if (sessionId) op.sessionId = sessionId;
  else if (sessionName !== undefined) op.sessionName = sessionName;
  const attachments = [...(earlier.attachments ?? []), ...(later.attachments ?? [])];
  if (attachments.length > 0) op.attachments = attachments;
  return op;
}

const POST_FIELDS = new Set(['trace_id', 'parent_run_id', 'parent_run_ids', 'dotted_order', 'name', 'run_type', 'start_time', 'inputs', 'serialized', 'reference_example_id', 'trace_tier']);

/** A post and a patch of one run in one request become one write: post fields from the post, the rest from the patch. */
function mergeEntry(entry: Merged): Candidate {
  const { post, patch } = entry;
  const primary = (post ?? patch)!;
  let values = primary.values;
  if (post && patch) {
    values = { ...post.values };
    for (const [key, value] of Object.entries(patch.values)) {
      if (value === undefined) continue;
      if (POST_FIELDS.has(key) && (values as unknown as Record<string, unknown>)[key] !== undefined) continue;
      (values as unknown as Record<string, unknown>)[key] = value;
    }
    if (post.values.extra && patch.values.extra) values.extra = { ...post.values.extra, ...patch.values.extra };
  }
  const candidate: Candidate = { values, posted: post !== undefined, patched: patch !== undefined, loc: primary.loc };
  const sessionId = post?.sessionId ?? (post?.sessionName === undefined ? patch?.sessionId : undefined);
  const sessionName = post?.sessionName ?? patch?.sessionName;
  if (sessionId) candidate.sessionId = sessionId;
  else if (sessionName !== undefined) candidate.sessionName = sessionName;
  const attachments = [...(post?.attachments ?? []), ...(patch?.attachments ?? [])];
  if (attachments.length > 0) candidate.attachments = attachments;
  return candidate;
}

function defined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
