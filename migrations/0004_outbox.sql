-- Effects outside Postgres (an email, a payment API): the transactional outbox.
--
-- A handler records its intent here inside effectOnce, so the intent commits
-- if and only if the job's effect and completion commit. The relay
-- (engine/effects/relay.ts) delivers each row at least once, passing `key`
-- to the receiver as its idempotency key, and marks it delivered.
--
--   pending    waiting to be delivered; due once run_at <= now(). A relay's
--              claim pushes run_at to now() + its lease, so a relay that dies
--              mid-delivery leaves the row due again when the lease runs out,
--              with no separate rescuer.
--   delivered  the receiver acknowledged it; pruned after the retention.
--   dead       the attempt budget is spent; kept until an operator acts
--              (redriveOutbox moves it back to pending).

CREATE TYPE stampede.outbox_state AS ENUM ('pending', 'delivered', 'dead');

CREATE TABLE stampede.outbox (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  topic         text NOT NULL CHECK (topic ~ '^[A-Za-z0-9_.:-]{1,128}$'),
  -- The receiver's idempotency key: the caller's, or a random one drawn once
  -- at insert (stable from then on, because the row is only inserted once).
  key           text NOT NULL CHECK (length(key) BETWEEN 1 AND 512),
  payload       jsonb NOT NULL,
  state         stampede.outbox_state NOT NULL DEFAULT 'pending',
  -- Charged at claim, so a delivery that kills its relay still uses one up.
  attempts      integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  max_attempts  integer NOT NULL DEFAULT 8 CHECK (max_attempts > 0),
  run_at        timestamptz NOT NULL DEFAULT now(),
  -- The claim of the relay delivering it now; a stale relay's failure is fenced on it.
  lease_token   uuid,
  lease_owner   text,
  last_error    text,
  -- One entry per failed attempt: {attempt, at, error}.
  errors        jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  delivered_at  timestamptz,
  dead_at       timestamptz,
  CONSTRAINT outbox_delivered_has_time CHECK ((state = 'delivered') = (delivered_at IS NOT NULL)),
  CONSTRAINT outbox_dead_has_time CHECK ((state = 'dead') = (dead_at IS NOT NULL))
);

-- One row per key: recording the same intent twice (say from the unsafe path
-- on a redelivery) inserts nothing the second time.
CREATE UNIQUE INDEX outbox_key_idx ON stampede.outbox (key);

-- The relay's claim probes only pending rows, so it stays small however many
-- delivered rows wait for the pruner.
CREATE INDEX outbox_due_idx ON stampede.outbox (run_at, id) WHERE state = 'pending';

-- The pruner deletes delivered rows oldest first.
CREATE INDEX outbox_delivered_idx ON stampede.outbox (delivered_at) WHERE state = 'delivered';

-- Dead rows are the alert signal; counted and listed cheaply.
CREATE INDEX outbox_dead_idx ON stampede.outbox (topic, dead_at) WHERE state = 'dead';
