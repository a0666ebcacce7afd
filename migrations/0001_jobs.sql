-- The queue is a table. Every job is one row whose state anyone can SELECT.
--
--   pending  enqueued, never attempted (or handed back: released on shutdown,
--            or rescued after its lease expired); claimable once run_at <= now()
--   claimed  a worker holds it until lease_expires_at; it renews by heartbeat
--   failed   its last attempt failed and a retry is scheduled at run_at
--            (backoff with jitter); claimable again once run_at <= now()
--   done     finished; terminal
--   dead     attempts exhausted (or it crashed its worker too often); a row in
--            stampede.dead_letters says why; only a redrive moves it back
--
-- `failed` differs from `pending` with a later run_at in what it tells an
-- operator: a failed job has already broken at least once, and its errors are
-- in `errors`. Both are due by the same rule.

CREATE SCHEMA IF NOT EXISTS stampede;

CREATE TYPE stampede.job_state AS ENUM ('pending', 'claimed', 'done', 'failed', 'dead');

CREATE TABLE stampede.jobs (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  queue            text NOT NULL CHECK (queue ~ '^[A-Za-z0-9_.:-]{1,128}$'),
  -- Larger runs first. A small fixed range keeps the per-priority index probes of the claim cheap.
  priority         smallint NOT NULL DEFAULT 0 CHECK (priority BETWEEN 0 AND 9),
  state            stampede.job_state NOT NULL DEFAULT 'pending',
  run_at           timestamptz NOT NULL DEFAULT now(),
  attempts         integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  max_attempts     integer NOT NULL DEFAULT 6 CHECK (max_attempts > 0),
  -- Leases that expired with no result recorded: the job most likely killed its worker.
  crash_count      integer NOT NULL DEFAULT 0 CHECK (crash_count >= 0),
  payload          jsonb NOT NULL DEFAULT '{}'::jsonb,
  idempotency_key  text,
  lease_owner      text,
  lease_token      uuid,
  lease_expires_at timestamptz,
  last_error       text,
  -- One entry per failed attempt: {attempt, at, kind, error}.
  errors           jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz,
  CONSTRAINT claimed_has_lease CHECK (
    (state = 'claimed') = (lease_token IS NOT NULL AND lease_expires_at IS NOT NULL AND lease_owner IS NOT NULL)
  )
);

-- The hottest query in the system is "which jobs are due?". It rides this
-- partial index, which holds only claimable rows, so it stays small however
-- many finished rows the table carries.
CREATE INDEX jobs_due_idx ON stampede.jobs (queue, priority, run_at, id)
  WHERE state IN ('pending', 'failed');

-- Expired-lease rescue scans only claimed rows.
CREATE INDEX jobs_lease_idx ON stampede.jobs (lease_expires_at) WHERE state = 'claimed';

-- Enqueueing the same key twice returns the first job.
CREATE UNIQUE INDEX jobs_idempotency_key_idx ON stampede.jobs (idempotency_key) WHERE idempotency_key IS NOT NULL;

-- The state machine is enforced here, not just documented: any other
-- transition is a bug and is refused.
CREATE FUNCTION stampede.check_job_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.state IS DISTINCT FROM OLD.state AND NOT (
       (OLD.state = 'pending' AND NEW.state IN ('claimed', 'dead'))
    OR (OLD.state = 'failed'  AND NEW.state IN ('claimed', 'dead'))
    OR (OLD.state = 'claimed' AND NEW.state IN ('done', 'failed', 'pending', 'dead'))
    OR (OLD.state = 'dead'    AND NEW.state = 'pending')
  ) THEN
    RAISE EXCEPTION 'stampede: job % may not go from % to %', OLD.id, OLD.state, NEW.state
      USING ERRCODE = 'check_violation';
  END IF;
  NEW.updated_at := now();
  RETURN NEW;
END $$;

CREATE TRIGGER jobs_state_machine BEFORE UPDATE ON stampede.jobs
  FOR EACH ROW EXECUTE FUNCTION stampede.check_job_transition();

-- Wake sleeping workers when work arrives. Statement-level, so a batch of
-- 10,000 rows sends one notification, and Postgres folds repeats within a
-- transaction into one.
CREATE FUNCTION stampede.notify_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('stampede_jobs', '');
  RETURN NULL;
END $$;

CREATE TRIGGER jobs_notify AFTER INSERT ON stampede.jobs
  FOR EACH STATEMENT EXECUTE FUNCTION stampede.notify_jobs();

-- Jobs that exhausted their attempt budget. Its depth is the alert signal
-- for "a downstream is broken or a payload is malformed", so it is kept
-- small (one row per dead job, removed on redrive) and counted cheaply.
CREATE TABLE stampede.dead_letters (
  job_id      bigint PRIMARY KEY REFERENCES stampede.jobs (id) ON DELETE CASCADE,
  queue       text NOT NULL,
  payload     jsonb NOT NULL,
  attempts    integer NOT NULL,
  reason      text NOT NULL,
  errors      jsonb NOT NULL,
  died_at     timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX dead_letters_queue_idx ON stampede.dead_letters (queue, died_at);
