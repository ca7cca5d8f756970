-- Agent server: assistants, threads, runs, checkpoints, store, crons. Filled in by the agent server work.
SELECT 1;
