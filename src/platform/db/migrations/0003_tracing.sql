-- Trace store: runs, projects (sessions), feedback. Filled in by the trace store work.
SELECT 1;
