-- Operating a queue: a terminal `cancelled` state, pausing a queue, global
-- per-queue limits (jobs in flight, starts per second) enforced by the claim,
-- and an audit of every operator action. The verbs: engine/control/.

-- cancelled: an operator stopped the job (engine/control/jobs.ts). Terminal,
-- like done; finished_at says when. Reached from pending, failed and claimed:
-- a claimed job's handler learns it at its next heartbeat (the renewal finds
-- no lease) and its result is refused by the lease fence, so a cancel is
-- final even when the handler runs on. (A new enum value cannot be used in
-- the transaction that adds it; nothing below uses it outside a function
-- body, which is only parsed when it first runs.)
ALTER TYPE stampede.job_state ADD VALUE IF NOT EXISTS 'cancelled';

-- The state machine of 0001, plus the operator's transitions:
--   pending | failed | claimed -> cancelled   (cancelJob)
--   pending | failed | claimed -> dead        (deadLetterJob; pending/failed -> dead existed)
-- `failed` stays `failed` when retried now (retryJob moves run_at), and a
-- dead job goes back to pending as before (redrive, retryJob).
CREATE OR REPLACE FUNCTION stampede.check_job_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.state IS DISTINCT FROM OLD.state AND NOT (
       (OLD.state = 'pending' AND NEW.state IN ('claimed', 'dead', 'cancelled'))
    OR (OLD.state = 'failed'  AND NEW.state IN ('claimed', 'dead', 'cancelled'))
    OR (OLD.state = 'claimed' AND NEW.state IN ('done', 'failed', 'pending', 'dead', 'cancelled'))
    OR (OLD.state = 'dead'    AND NEW.state = 'pending')
  ) THEN
    RAISE EXCEPTION 'stampede: job % may not go from % to %', OLD.id, OLD.state, NEW.state
      USING ERRCODE = 'check_violation';
  END IF;
  NEW.updated_at := now();
  RETURN NEW;
END $$;

-- Per-queue operating state, beside max_attempts (0002).
--   paused                 no worker claims from the queue (claim_gate below);
--                          paused_at/_by/_reason say since when, who and why.
--   max_in_flight          at most this many of the queue's jobs claimed at
--                          once, across every worker: counted from the claimed
--                          rows themselves, so a dead worker's slots come back
--                          with its leases (the rescuer), and nothing can leak.
--   max_starts_per_second  a token bucket of one second's worth (at least 1)
--                          refilled continuously: at most burst + rate * T
--                          starts in any T seconds. start_tokens/_at are the
--                          bucket; a crash cannot leak it (it refills with time).
ALTER TABLE stampede.queue_settings
  ADD COLUMN paused boolean NOT NULL DEFAULT false,
  ADD COLUMN paused_at timestamptz,
  ADD COLUMN paused_by text,
  ADD COLUMN paused_reason text,
  ADD COLUMN max_in_flight integer CHECK (max_in_flight > 0),
  ADD COLUMN max_starts_per_second float8 CHECK (max_starts_per_second > 0 AND max_starts_per_second <= 1000000),
  ADD COLUMN start_tokens float8,
  ADD COLUMN start_tokens_at timestamptz;

-- Claimed jobs per queue, for the in-flight limit and the sampler: an
-- index-only count of at most the queue's claimed rows. Its cost is one index
-- entry per claim and heartbeat row version, on every queue (measured with
-- the claim, docs/operating.md).
CREATE INDEX jobs_claimed_queue_idx ON stampede.jobs (queue) WHERE state = 'claimed';

-- Who did what and why. One row per job an action changed (a bulk redrive of
-- 500 jobs writes 500), one per queue action. No foreign key: the audit
-- outlives archived jobs.
CREATE TABLE stampede.control_audit (
  id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at       timestamptz NOT NULL DEFAULT now(),
  actor    text NOT NULL CHECK (length(actor) BETWEEN 1 AND 200),
  reason   text NOT NULL CHECK (length(reason) BETWEEN 1 AND 2000),
  verb     text NOT NULL,
  queue    text NOT NULL,
  job_id   bigint,
  -- What the action found and did, e.g. {"from": "failed"}.
  detail   jsonb NOT NULL DEFAULT '{}'::jsonb
);

CREATE INDEX control_audit_job_idx ON stampede.control_audit (job_id, at) WHERE job_id IS NOT NULL;
CREATE INDEX control_audit_queue_idx ON stampede.control_audit (queue, at);

-- The advisory lock that orders claims against pause, resume and limit
-- changes of one queue. A hash collision between two queues only makes them
-- take turns.
CREATE FUNCTION stampede.queue_lock_key(queue text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT hashtextextended('stampede.queue:' || queue, 0) $$;

-- The start-rate bucket's tokens at `at`, refilled since it was last drawn.
CREATE FUNCTION stampede.start_tokens(s stampede.queue_settings, at timestamptz) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN s.max_starts_per_second IS NULL THEN NULL ELSE
    least(greatest(1, s.max_starts_per_second),
          coalesce(s.start_tokens, greatest(1, s.max_starts_per_second))
          + s.max_starts_per_second * greatest(0, extract(epoch FROM at - coalesce(s.start_tokens_at, at))))
  END
$$;

-- What the claim may take from each queue of `queues`: one row per queue,
-- paused, and allowance = how many more jobs may start now (NULL: no limit).
-- The claim applies both: a paused queue is dropped by its pause filter, a
-- limited one cut to its allowance (each its own clause, so each is one
-- guarantee a negative control can remove).
-- `wanted` is the most the claim will take (its free slots).
--
-- Why a function: a claim statement reads the table as of its start (READ
-- COMMITTED), so two workers claiming at once would both count the same
-- in-flight jobs and both fill the last slot. This function runs inside the
-- claim statement but, being VOLATILE, takes a fresh snapshot per query: it
-- first takes the queue's advisory lock, held to the claim's commit, then
-- reads the settings and counts the claimed rows, so it sees every claim
-- committed before it and none can commit while it holds the lock.
--   * limited queue: an exclusive lock; claims of that queue take turns (the
--     price of a global limit: one claim at a time per limited queue).
--   * any other queue: a shared lock; claims run side by side as before
--     (SKIP LOCKED scaling is untouched), but pause/resume/setQueueLimits take
--     the exclusive lock, so a pause returns only once every claim that might
--     have missed it has committed: after pauseQueue returns, nothing starts.
-- A queue that became limited between the first look and the lock is given
-- 0 this round (only a shared lock is held); the next claim locks it properly.
-- Tokens granted to a claim that then finds fewer due jobs are not returned:
-- the start rate can fall short of its limit under light load, never exceed it.
CREATE FUNCTION stampede.claim_gate(queues text[], wanted int)
RETURNS TABLE (queue text, paused boolean, allowance int)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  name      text;
  s         stampede.queue_settings;
  exclusive boolean;
  room      int;
  claimed   int;
  tokens    float8;
  at        timestamptz;
BEGIN
  FOR name IN SELECT DISTINCT u.q FROM unnest(queues) AS u(q) ORDER BY u.q LOOP
    SELECT * INTO s FROM stampede.queue_settings qs WHERE qs.queue = name;
    exclusive := FOUND AND (s.max_in_flight IS NOT NULL OR s.max_starts_per_second IS NOT NULL);
    IF exclusive THEN
      PERFORM pg_advisory_xact_lock(stampede.queue_lock_key(name));
    ELSE
      PERFORM pg_advisory_xact_lock_shared(stampede.queue_lock_key(name));
    END IF;
    s := NULL;
    SELECT * INTO s FROM stampede.queue_settings qs WHERE qs.queue = name;
    queue := name;
    paused := coalesce(s.paused, false);
    allowance := NULL;
    IF paused THEN
      -- The claim's pause filter stops a paused queue; a limited one gets no room either, and its bucket is not drawn.
      allowance := CASE WHEN s.max_in_flight IS NOT NULL OR s.max_starts_per_second IS NOT NULL THEN 0 END;
    ELSIF s.max_in_flight IS NOT NULL OR s.max_starts_per_second IS NOT NULL THEN
      room := CASE WHEN exclusive THEN greatest(wanted, 0) ELSE 0 END;
      IF room > 0 AND s.max_in_flight IS NOT NULL THEN
        SELECT count(*) INTO claimed FROM stampede.jobs j WHERE j.state = 'claimed' AND j.queue = name;
        room := least(room, greatest(s.max_in_flight - claimed, 0));
      END IF;
      IF exclusive AND s.max_starts_per_second IS NOT NULL THEN
        at := clock_timestamp();
        tokens := stampede.start_tokens(s, at);
        room := least(room, floor(tokens)::int);
        UPDATE stampede.queue_settings qs SET start_tokens = tokens - room, start_tokens_at = at WHERE qs.queue = name;
      END IF;
      allowance := room;
    END IF;
    RETURN NEXT;
  END LOOP;
END $$;
