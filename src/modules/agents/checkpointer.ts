// Berth's checkpointer: LangGraph checkpoints and pending writes in the agent server's database.
// One row holds a whole checkpoint (channel values included): a run reads the latest checkpoint with one
// query and writes each new one with one statement, which keeps the per-run overhead to a few round trips.
// A checkpoint holds the thread's whole state (every message so far) and a run writes one per step, so
// large values are compressed here (zstd, fast and ~10× on serialized messages) rather than by the
// database: a tenth of the bytes cross to the database, into its WAL and, on PGlite, through WASM.
import zlib from 'node:zlib';
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
import { CheckpointHold } from './checkpoint-hold.ts';

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
/** Values from this size on are stored compressed (below it compression saves little). */
const COMPRESS_FROM_BYTES = 2048;
/** Marks a compressed value in the `type` column: `<serde type>+zstd`, the value base64 text. */
const ZSTD_SUFFIX = '+zstd';
const ZSTD_LEVEL = { params: { [zlib.constants.ZSTD_c_compressionLevel]: 1 } };

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

/**
 * The insert of one checkpoint from `rows` (a VALUES list or a SELECT of: thread, namespace, id, parent,
 * type, value, metadata), as put writes it and as a run's end writes its held last one (see CheckpointHold).
 */
export function insertCheckpointSql(rows: string): string {
  return `INSERT INTO agent_checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
    ${rows} ${ON_CONFLICT}`;
}

const INSERT_CHECKPOINT = insertCheckpointSql('VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)');

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
  readonly #hold = new CheckpointHold((params) => this.#insert(params), () => undefined);
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

  /** Holds the run's root checkpoints back one at a time, for its end to write the last (see CheckpointHold). */
  holdLastCheckpoint(runId: string): void {
    this.#hold.start(runId);
  }

  /** Stops holding for the run; its last checkpoint, if held, is the caller's to write (insertCheckpointSql). */
  async releaseLastCheckpoint(runId: string): Promise<unknown[] | undefined> {
    return (await this.#hold.release(runId))?.params;
  }

  async #insert(params: unknown[]): Promise<void> {
    await this.#db.query(prepared(INSERT_CHECKPOINT), params);
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
      await this.#hold.hold(runId, { threadId: String(threadId), params });
    } else {
      await this.#insert(params);
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
    const params: unknown[] = [];
    const values = writes.map(([channel], index) => {
      const [type, bytes] = serialized[index]!;
      const idx = WRITES_IDX_MAP[channel] ?? index;
      params.push(String(threadId), ns, checkpointId, taskId, idx, channel, ...encode(type, bytes), taskPath);
      const base = params.length - 9;
      return `(${Array.from({ length: 9 }, (_, i) => `$${base + i + 1}`).join(', ')})`;
    });
    await this.#db.query(
      prepared(`INSERT INTO agent_checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path)
       VALUES ${values.join(', ')}
       ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) ${
        upsert ? 'DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, value = EXCLUDED.value' : 'DO NOTHING'}`),
      params,
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
  if (bytes.byteLength >= COMPRESS_FROM_BYTES) {
    return [`${type}${ZSTD_SUFFIX}`, zlib.zstdCompressSync(bytes, ZSTD_LEVEL).toString('base64')];
  }
  return [type, type === 'json' ? textDecoder.decode(bytes) : Buffer.from(bytes).toString('base64')];
}

/** The serde type and data of a stored value (see encode). */
export function decode(type: string, text: string): [string, Uint8Array | string] {
  if (type.endsWith(ZSTD_SUFFIX)) {
    return [type.slice(0, -ZSTD_SUFFIX.length), zlib.zstdDecompressSync(Buffer.from(text, 'base64'))];
  }
  return [type, type === 'json' ? text : Buffer.from(text, 'base64')];
}

/** jsonb cannot hold NUL characters; metadata never needs them. */
function jsonText(bytes: Uint8Array): string {
  return textDecoder.decode(bytes).replace(/\\u0000/g, '');
}
