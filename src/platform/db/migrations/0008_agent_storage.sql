-- How the agent server's large values are stored.
-- Checkpoints and pending writes are compressed by the checkpointer already (zstd, base64 text): the
-- database stores them as they come instead of trying to compress them again.
ALTER TABLE agent_checkpoints ALTER COLUMN checkpoint SET STORAGE EXTERNAL;
ALTER TABLE agent_checkpoint_writes ALTER COLUMN value SET STORAGE EXTERNAL;

-- A thread's values (rewritten at the end of every run, growing with the thread) and a run's arguments
-- are compressed with lz4 where the server has it (PostgreSQL builds with lz4 do): several times faster
-- than the default pglz for the same use. The embedded engine has only pglz and keeps it.
DO $$
BEGIN
  ALTER TABLE agent_threads ALTER COLUMN "values" SET COMPRESSION lz4;
  ALTER TABLE agent_runs ALTER COLUMN kwargs SET COMPRESSION lz4;
  ALTER TABLE agent_run_events ALTER COLUMN data SET COMPRESSION lz4;
EXCEPTION WHEN OTHERS THEN
  NULL;
END
$$;
