-- Worker liveness: each live worker renews its row every livenessMs, so the
-- lease rescuer can tell a dead lease holder from a live one whose lease ran
-- out because it could not reach the database (a Postgres restart, a dropped
-- connection while it wrote its result). Only the first is charged a crash.
-- A logged table on purpose: an unlogged one is emptied by a crash of
-- Postgres, and every live worker would then look dead.
CREATE TABLE stampede.workers (
  worker_id    text PRIMARY KEY,
  started_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL,
  -- last_seen_at + ttl_ms: silent past this, the worker is presumed dead.
  expires_at   timestamptz NOT NULL,
  ttl_ms       integer NOT NULL CHECK (ttl_ms > 0),
  -- When a rescuer first found the row past its expiry (null: not suspected).
  -- Silence is judged from here, not from expires_at alone: a step of the
  -- database clock expires every row at once, and a live worker clears the
  -- suspicion with its next renewal (docs/crash-accounting.md).
  suspected_at timestamptz
);
