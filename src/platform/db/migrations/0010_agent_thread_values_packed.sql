-- A thread's values (rewritten at the end of every run, growing with the thread) are stored by the agent
-- server zstd-compressed from 2 KB on, as base64 text in values_packed ("values" is then NULL), as its
-- checkpoints are; smaller values stay in "values" (json), where search filters read them directly.
ALTER TABLE agent_threads ADD COLUMN values_packed text;
ALTER TABLE agent_threads ALTER COLUMN values_packed SET STORAGE EXTERNAL;
