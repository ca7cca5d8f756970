-- Webhook deliveries, durable: a finished run's webhook is recorded in the statement that ends the run,
-- and deleted once its URL accepted it. A process that dies before (or while) delivering leaves the row;
-- another process, or this one after a restart, delivers it when its claim lapses.
CREATE TABLE agent_webhook_deliveries (
  delivery_id uuid PRIMARY KEY,
  run_id uuid NOT NULL,
  url text NOT NULL,
  -- the JSON body without `webhook_sent_at`, which each attempt adds
  payload text NOT NULL,
  attempt integer NOT NULL DEFAULT 0,
  -- when the next attempt is due; a claimed delivery is pushed past its claim's end
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  last_error text
);
CREATE INDEX agent_webhook_deliveries_due ON agent_webhook_deliveries (next_attempt_at);
