-- Cron fires, exactly once. Claiming a cron's occurrence records the fire it owes here, in the statement
-- that moves the cron to its next date; inserting the fire's run consumes that record in the same
-- transaction (the trigger below). A process that dies between the two leaves the fire owed, and a
-- recovery pass delivers it later. A second delivery finds nothing owed and inserts nothing, even when
-- the first run no longer exists (a stateless run is deleted with its temporary thread when it ends), so
-- "does the run exist" is never the test. Deleting the cron (or its thread) deletes what it owes.
CREATE TABLE agent_cron_fires (
  -- the run the fire creates: a UUIDv5 of (cron_id, scheduled_for); no other run id is version 5
  run_id uuid PRIMARY KEY,
  cron_id uuid NOT NULL REFERENCES agent_crons (cron_id) ON DELETE CASCADE,
  scheduled_for timestamptz NOT NULL,
  -- the last delivery attempt: recovery takes the fires whose attempt is a few seconds old
  attempted_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_cron_fires_attempted ON agent_cron_fires (attempted_at);
CREATE INDEX agent_cron_fires_cron ON agent_cron_fires (cron_id);

-- A cron fire's run may be inserted only while its fire is owed. Concurrent deliveries of one fire
-- serialize on the fire's row: the second finds it gone and fails with BC001 (which the cron code
-- treats as "already done"). search_path is pinned so the function finds this schema's table.
CREATE FUNCTION agent_cron_fire_consume() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM agent_cron_fires WHERE run_id = NEW.run_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'cron fire % is not owed', NEW.run_id USING ERRCODE = 'BC001';
  END IF;
  RETURN NEW;
END
$$;

-- Other runs (random v4 ids) fail the WHEN test and never call the function.
CREATE TRIGGER agent_runs_cron_fire BEFORE INSERT ON agent_runs FOR EACH ROW
  WHEN (substr(NEW.run_id::text, 15, 1) = '5') EXECUTE FUNCTION agent_cron_fire_consume();
