// Berth's checkpointer: LangGraph checkpoints and pending writes in the agent server's database.
// One row holds a whole checkpoint (channel values included): a run reads the latest checkpoint with one
// query and writes each new one with one statement, which keeps the per-run overhead to a few round trips.
// A checkpoint holds the thread's whole state (every message so far) and a run writes one per step, so
// large values are stored packed (see packed.ts).
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  WRITES_IDX_MAP,
  copyCheckpoint,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import { prepared, type SqlExecutor } from '../../platform/db/index.ts';
import { CheckpointSerializer } from './checkpoint-serde.ts';
import { CheckpointHold, HeldRows, type HeldRow } from './checkpoint-hold.ts';
import { pack, PACK_FROM_BYTES, unpack } from './packed.ts';

/** A stored checkpoint with its pending writes, as one query (or a run's insert, see latestCheckpointSql) reads it. */
export interface CheckpointRow {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  type: string;
  checkpoint: string;
  metadata: Record<string, unknown>;
  writes: { task_id: string; channel: string; type: string; value: string }[] | null;
}

const textDecoder = new TextDecoder();
/** Marks a packed value in the `type` column: `<serde type>+zstd`. */
const ZSTD_SUFFIX = '+zstd';

/** Pending writes travel inside a JSON aggregate so that a checkpoint and its writes come back in one query. */
const SELECT_TUPLE = `
  SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.type, c.checkpoint, c.metadata,
    (SELECT json_agg(json_build_object('task_id', w.task_id, 'channel', w.channel, 'type', w.type, 'value', w.value)
                     ORDER BY w.task_id, w.idx)
       FROM agent_checkpoint_writes w
      WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id) AS writes
  FROM agent_checkpoints c`;

const ON_CONFLICT = `ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
  DO UPDATE SET type = EXCLUDED.type, checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata,
                parent_checkpoint_id = EXCLUDED.parent_checkpoint_id`;
const CHECKPOINT_COLUMNS = ['thread_id', 'checkpoint_ns', 'checkpoint_id', 'parent_checkpoint_id', 'type', 'checkpoint', 'metadata'];
const CHECKPOINT_RECORD = 'x(thread_id text, checkpoint_ns text, checkpoint_id text, parent_checkpoint_id text, type text, checkpoint text, metadata jsonb)';
const WRITE_COLUMNS = ['thread_id', 'checkpoint_ns', 'checkpoint_id', 'task_id', 'idx', 'channel', 'type', 'value', 'task_path'];
const WRITE_RECORD = 'x(thread_id text, checkpoint_ns text, checkpoint_id text, task_id text, idx integer, channel text, type text, value text, task_path text, upsert boolean)';
const WRITE_KEY = '(thread_id, checkpoint_ns, checkpoint_id, task_id, idx)';

const INSERT_CHECKPOINT = `INSERT INTO agent_checkpoints (${CHECKPOINT_COLUMNS.join(', ')}) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb) ${ON_CONFLICT}`;
const WRITE_CONFLICT = {
  upsert: `ON CONFLICT ${WRITE_KEY} DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, value = EXCLUDED.value`,
  keep: `ON CONFLICT ${WRITE_KEY} DO NOTHING`,
};

/** Rows held by a run for one statement (see insertRowsCtes): JSON arrays of checkpoint and write records, null when none. */
export type HeldRowsParams = [checkpoints: string | null, writes: string | null];

/**
 * CTEs (ck, wu, wn) inserting checkpoints and pending writes given as JSON arrays of records (the SQL
 * parameters `checkpoints` and `writes`, see HeldRowsParams): the statement of a holding run's flush, and
 * part of a run's end (RunRepo.finish), which passes its own CTE as `guard` so that the rows are written
 * only if the run was still its worker's. A JSON array keeps the statement one shape (prepared once)
 * whatever the number of rows.
 */
export function insertRowsCtes(checkpoints: string, writes: string, guard?: string): string {
  const from = (records: string, record: string) => `FROM ${guard ? `${guard}, ` : ''}json_to_recordset(${records}::json) AS ${record}`;
  const select = (columns: string[]) => columns.map((column) => `x.${column}`).join(', ');
  const insertWrites = `INSERT INTO agent_checkpoint_writes (${WRITE_COLUMNS.join(', ')}) SELECT ${select(WRITE_COLUMNS)} ${from(writes, WRITE_RECORD)}`;
  return `ck AS (
      INSERT INTO agent_checkpoints (${CHECKPOINT_COLUMNS.join(', ')}) SELECT ${select(CHECKPOINT_COLUMNS)} ${from(checkpoints, CHECKPOINT_RECORD)}
      ${ON_CONFLICT}),
    wu AS (${insertWrites} WHERE x.upsert ${WRITE_CONFLICT.upsert}),
    wn AS (${insertWrites} WHERE NOT x.upsert ${WRITE_CONFLICT.keep})`;
}

const INSERT_HELD_ROWS = `WITH ${insertRowsCtes('$1', '$2')} SELECT 1`;

/** The JSON records of held rows, from their insert parameters (the metadata parameter is JSON text already). */
function heldRowsParams(rows: HeldRows): HeldRowsParams {
  const records = { checkpoint: [] as string[], write: [] as string[] };
  for (const row of rows.rows()) {
    const columns = row.kind === 'checkpoint' ? CHECKPOINT_COLUMNS : WRITE_COLUMNS;
    const fields = columns.map((column, i) => `"${column}":${column === 'metadata' ? row.params[i] : JSON.stringify(row.params[i])}`);
    if (row.kind === 'write') fields.push(`"upsert":${row.replaces}`);
    records[row.kind].push(`{${fields.join(',')}}`);
  }
  const array = (items: string[]) => (items.length ? `[${items.join(',')}]` : null);
  return [array(records.checkpoint), array(records.write)];
}

/**
 * SQL for the latest root checkpoint of the thread whose id is the parameter `param` (text), as one JSON
 * value or null: a run's insert reads it in the same statement (see prime).
 */
export function latestCheckpointSql(param: string): string {
  return `(SELECT row_to_json(x) FROM (${SELECT_TUPLE} WHERE c.thread_id = ${param} AND c.checkpoint_ns = ''
    ORDER BY c.checkpoint_id DESC LIMIT 1) x)`;
}

export class DbCheckpointSaver extends BaseCheckpointSaver {
  readonly #db: SqlExecutor;
  /** Runs' first reads, fetched with their inserts: run id → thread and its latest checkpoint (or none). */
  readonly #primed = new Map<string, { threadId: string; row: CheckpointRow | null }>();
  readonly #hold = new CheckpointHold(async (rows) => {
    await this.#db.query(prepared(INSERT_HELD_ROWS), heldRowsParams(rows));
  }, () => undefined);
  /** Per holding run: the serialized forms of the LangChain objects of its latest checkpoint. */
  readonly #forms = new Map<string, WeakMap<object, unknown>>();

  constructor(db: SqlExecutor, serde?: SerializerProtocol) {
    super(serde);
    // Same bytes as LangGraph's own serializer, which stays for the values it alone can write.
    if (!serde) this.serde = new CheckpointSerializer(this.serde);
    this.#db = db;
  }

  async #toTuple(row: CheckpointRow): Promise<CheckpointTuple> {
    const checkpoint = (await this.serde.loadsTyped(...decode(row.type, row.checkpoint))) as Checkpoint;
    const metadata = (await this.serde.loadsTyped('json', JSON.stringify(row.metadata))) as CheckpointMetadata;
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
      (row.writes ?? []).map(async (write) => [
        write.task_id,
        write.channel,
        await this.serde.loadsTyped(...decode(write.type, write.value)),
      ] as CheckpointPendingWrite),
    );
    const tuple: CheckpointTuple = {
      config: { configurable: { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns, checkpoint_id: row.checkpoint_id } },
      checkpoint,
      metadata,
      pendingWrites,
    };
    if (row.parent_checkpoint_id) {
      tuple.parentConfig = {
        configurable: { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns, checkpoint_id: row.parent_checkpoint_id },
      };
    }
    return tuple;
  }

  /**
   * Answers the first read of a run's thread (its latest root checkpoint) with the row its insert returned,
   * saving that round trip. Nothing but the run itself writes the thread's checkpoints from its insert on.
   */
  prime(runId: string, threadId: string, row: CheckpointRow | null): void {
    this.#primed.set(runId, { threadId, row });
  }

  /** Forgets what was kept for a run (its prime; a checkpoint still held is written). */
  async forget(runId: string): Promise<void> {
    this.#primed.delete(runId);
    this.#forms.delete(runId);
    await this.#hold.stop(runId);
  }

  /**
   * The serialized forms (toJSON) of the LangChain objects in the run's latest root checkpoint, as it was
   * written. Once the run's graph has finished, no code ran since, so they are its final values' forms.
   */
  latestForms(runId: string): WeakMap<object, unknown> | undefined {
    return this.#forms.get(runId);
  }

  /** Holds the run's root checkpoints and writes back, to be written together (see CheckpointHold). */
  holdCheckpoints(runId: string): void {
    this.#hold.start(runId);
  }

  /** Stops holding for the run; what it holds is the caller's to write (insertRowsCtes). */
  async releaseHeld(runId: string): Promise<HeldRowsParams | undefined> {
    const rows = await this.#hold.release(runId);
    return rows && heldRowsParams(rows);
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id;
    if (threadId === undefined || threadId === null) return undefined;
    const ns: string = config.configurable?.checkpoint_ns ?? '';
    const checkpointId: string | undefined = config.configurable?.checkpoint_id ?? config.configurable?.thread_ts;
    const runId = config.configurable?.run_id;
    const primed = typeof runId === 'string' && !checkpointId && ns === '' ? this.#primed.get(runId) : undefined;
    if (primed && primed.threadId === String(threadId)) {
      this.#primed.delete(runId);
      return primed.row ? this.#toTuple(primed.row) : undefined;
    }
    await this.#hold.flushThread(String(threadId));
    const rows = checkpointId
      ? await this.#db.query<CheckpointRow>(
        prepared(`${SELECT_TUPLE} WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = $3`),
        [String(threadId), ns, checkpointId],
      )
      : await this.#db.query<CheckpointRow>(
        prepared(`${SELECT_TUPLE} WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 ORDER BY c.checkpoint_id DESC LIMIT 1`),
        [String(threadId), ns],
      );
    return rows[0] ? this.#toTuple(rows[0]) : undefined;
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (clause: (n: string) => string, value: unknown) => {
      params.push(value);
      where.push(clause(`$${params.length}`));
    };
    const configurable = config.configurable ?? {};
    if (configurable.thread_id !== undefined) {
      await this.#hold.flushThread(String(configurable.thread_id));
      add((n) => `c.thread_id = ${n}`, String(configurable.thread_id));
    }
    if (configurable.checkpoint_ns !== undefined) add((n) => `c.checkpoint_ns = ${n}`, configurable.checkpoint_ns);
    if (configurable.checkpoint_id) add((n) => `c.checkpoint_id = ${n}`, configurable.checkpoint_id);
    const before = options.before?.configurable?.checkpoint_id;
    if (before) add((n) => `c.checkpoint_id < ${n}`, before);
    if (options.filter && Object.keys(options.filter).length > 0) {
      add((n) => `c.metadata @> ${n}::jsonb`, JSON.stringify(options.filter));
    }
    let text = `${SELECT_TUPLE}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY c.thread_id, c.checkpoint_ns, c.checkpoint_id DESC`;
    if (options.limit !== undefined) {
      params.push(Math.max(0, options.limit));
      text += ` LIMIT $${params.length}`;
    }
    const rows = await this.#db.query<CheckpointRow>(text, params);
    for (const row of rows) yield await this.#toTuple(row);
  }

  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, _newVersions: ChannelVersions): Promise<RunnableConfig> {
    const threadId = config.configurable?.thread_id;
    if (threadId === undefined || threadId === null) {
      throw new Error('Failed to put checkpoint: the config has no "configurable.thread_id".');
    }
    const ns: string = config.configurable?.checkpoint_ns ?? '';
    const parentId: string | null = config.configurable?.checkpoint_id ?? null;
    const runId = config.configurable?.run_id;
    const holding = ns === '' && this.#hold.holding(runId);
    // A held checkpoint may be its run's last: the forms of its messages are kept for the run's answer.
    const forms = holding && this.serde instanceof CheckpointSerializer ? new WeakMap<object, unknown>() : undefined;
    const [[type, bytes], [, metadataBytes]] = await Promise.all([
      forms ? (this.serde as CheckpointSerializer).dumpsTyped(copyCheckpoint(checkpoint), forms) : this.serde.dumpsTyped(copyCheckpoint(checkpoint)),
      this.serde.dumpsTyped(withRunIdentity(metadata, config.configurable)),
    ]);
    const params = [String(threadId), ns, checkpoint.id, parentId, ...encode(type, bytes), jsonText(metadataBytes)];
    if (holding) {
      if (forms) this.#forms.set(runId, forms);
      await this.#hold.hold(runId, String(threadId), [{ kind: 'checkpoint', key: `${ns}\u0000${checkpoint.id}`, params, replaces: true }]);
    } else {
      await this.#db.query(prepared(INSERT_CHECKPOINT), params);
    }
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    const threadId = config.configurable?.thread_id;
    const ns: string = config.configurable?.checkpoint_ns ?? '';
    const checkpointId = config.configurable?.checkpoint_id;
    if (threadId === undefined || threadId === null) throw new Error('Failed to put writes: the config has no "configurable.thread_id".');
    if (!checkpointId) throw new Error('Failed to put writes: the config has no "configurable.checkpoint_id".');
    if (writes.length === 0) return;
    const taskPath: string = config.configurable?.task_path ?? '';
    const serialized = await Promise.all(writes.map(([, value]) => this.serde.dumpsTyped(value)));
    // Special channels (errors, interrupts, resume values) have fixed negative indexes and replace earlier
    // writes; ordinary writes keep the first value written for their index, as the reference savers do.
    const upsert = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    const rows = writes.map(([channel], index): HeldRow => {
      const idx = WRITES_IDX_MAP[channel] ?? index;
      const params = [String(threadId), ns, checkpointId, taskId, idx, channel, ...encode(...serialized[index]!), taskPath];
      return { kind: 'write', key: `${ns}\u0000${checkpointId}\u0000${taskId}\u0000${idx}`, params, replaces: upsert };
    });
    const runId = config.configurable?.run_id;
    if (ns === '' && this.#hold.holding(runId)) return this.#hold.hold(runId, String(threadId), rows);
    const values = rows.map((_, row) => `(${WRITE_COLUMNS.map((_, column) => `$${row * WRITE_COLUMNS.length + column + 1}`).join(', ')})`);
    await this.#db.query(
      prepared(`INSERT INTO agent_checkpoint_writes (${WRITE_COLUMNS.join(', ')}) VALUES ${values.join(', ')} ${upsert ? WRITE_CONFLICT.upsert : WRITE_CONFLICT.keep}`),
      rows.flatMap((row) => row.params),
    );
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.#hold.flushThread(String(threadId));
    await this.#db.query(
      `WITH w AS (DELETE FROM agent_checkpoint_writes WHERE thread_id = $1)
       DELETE FROM agent_checkpoints WHERE thread_id = $1`,
      [String(threadId)],
    );
  }

  /** Copies every checkpoint and write of one thread to another (thread copy). */
  async copyThread(fromThreadId: string, toThreadId: string): Promise<void> {
    await this.#hold.flushThread(String(fromThreadId));
    await this.#db.query(
      `WITH c AS (
         INSERT INTO agent_checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
         SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
           FROM agent_checkpoints WHERE thread_id = $1)
       INSERT INTO agent_checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path)
       SELECT $2, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path
         FROM agent_checkpoint_writes WHERE thread_id = $1`,
      [fromThreadId, toThreadId],
    );
  }

  /** Keeps only the newest checkpoint of each namespace of a thread (thread prune `keep_latest`). */
  async keepLatest(threadId: string): Promise<void> {
    await this.#hold.flushThread(String(threadId));
    await this.#db.query(
      `WITH latest AS (
         SELECT checkpoint_ns, max(checkpoint_id) AS checkpoint_id FROM agent_checkpoints WHERE thread_id = $1 GROUP BY checkpoint_ns),
       w AS (
         DELETE FROM agent_checkpoint_writes w WHERE w.thread_id = $1
            AND NOT EXISTS (SELECT 1 FROM latest l WHERE l.checkpoint_ns = w.checkpoint_ns AND l.checkpoint_id = w.checkpoint_id))
       DELETE FROM agent_checkpoints c WHERE c.thread_id = $1
          AND NOT EXISTS (SELECT 1 FROM latest l WHERE l.checkpoint_ns = c.checkpoint_ns AND l.checkpoint_id = c.checkpoint_id)`,
      [threadId],
    );
  }

  /** Deletes the checkpoints a run wrote (rollback). */
  async deleteRunCheckpoints(threadId: string, runId: string): Promise<void> {
    await this.#hold.flushThread(String(threadId));
    await this.#db.query(
      `WITH gone AS (
         DELETE FROM agent_checkpoints WHERE thread_id = $1 AND metadata->>'run_id' = $2
         RETURNING checkpoint_ns, checkpoint_id)
       DELETE FROM agent_checkpoint_writes w USING gone
        WHERE w.thread_id = $1 AND w.checkpoint_ns = gone.checkpoint_ns AND w.checkpoint_id = gone.checkpoint_id`,
      [threadId, runId],
    );
  }
}

/**
 * As the official servers do, a checkpoint records which run, graph and assistant wrote it (from the
 * run's configurable): history can be filtered by run, and a rollback finds the run's checkpoints.
 */
function withRunIdentity(metadata: CheckpointMetadata, configurable: Record<string, unknown> | undefined): CheckpointMetadata {
  if (!configurable) return metadata;
  const extra: Record<string, unknown> = {};
  for (const key of ['run_id', 'graph_id', 'assistant_id', 'user_id'] as const) {
    const value = configurable[key];
    if ((typeof value === 'string' || typeof value === 'number') && !(key in metadata)) extra[key] = value;
  }
  return Object.keys(extra).length ? { ...metadata, ...extra } : metadata;
}

/**
 * A serialized value as stored: [type column, value column]. Small JSON as itself, large values zstd
 * compressed, other bytes as base64 (the value column is text).
 */
export function encode(type: string, bytes: Uint8Array): [string, string] {
  if (bytes.byteLength >= PACK_FROM_BYTES) return [`${type}${ZSTD_SUFFIX}`, pack(bytes)];
  return [type, type === 'json' ? textDecoder.decode(bytes) : Buffer.from(bytes).toString('base64')];
}

/** The serde type and data of a stored value (see encode). */
export function decode(type: string, text: string): [string, Uint8Array | string] {
  if (type.endsWith(ZSTD_SUFFIX)) {
    return [type.slice(0, -ZSTD_SUFFIX.length), unpack(text)];
  }
  return [type, type === 'json' ? text : Buffer.from(text, 'base64')];
}

/** jsonb cannot hold NUL characters; metadata never needs them. */
function jsonText(bytes: Uint8Array): string {
  return textDecoder.decode(bytes).replace(/\\u0000/g, '');
}
