-- The job state machine of 0010 and the updated_at stamp, at a fraction of
-- their cost on the worker's hot path (issue 15).
--
-- Before: one plpgsql trigger (stampede.check_job_transition) ran for every
-- UPDATE of every job row, to test the transition and to set updated_at.
-- Entering plpgsql once per row was most of its price. Now:
--   * jobs_state_machine keeps the legal-transition table of 0010 in its WHEN
--     clause, which Postgres evaluates as a plain expression; the plpgsql
--     function behind it only raises, and runs only for a refused transition.
--   * jobs_updated_at sets updated_at only when the UPDATE did not already set
--     it to now(). Every UPDATE of stampede.jobs that the engine sends sets
--     `updated_at = now()` itself (engine/**/*.sql), so its function runs only
--     for another writer: an operator's hand-written UPDATE still stamps it.
-- Measured: interleaved A/B of claim 500 + complete 500 over 20,000 jobs, one
-- client, 18 rounds in rotated order on the shared 2-core machine, median of
-- the per-round ratios to 0010's trigger: this pair 0.935 (6.5 % less time per
-- job), no trigger at all 0.903, 0010's trigger against itself 1.000. So the
-- old trigger cost about 11 % of claim plus completion, the pair about 3.5 %
-- (docs/performance.md).
--
-- The guarantee is the same as before, for every UPDATE by anyone: the
-- transition is refused with the same message and SQLSTATE, and afterwards
-- updated_at = now() (the statement's transaction time).

-- Only raises: its trigger's WHEN clause has decided the transition is not
-- allowed. (Attached without that WHEN, it would refuse every UPDATE: fails
-- closed.)
CREATE FUNCTION stampede.refuse_job_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'stampede: job % may not go from % to %', OLD.id, OLD.state, NEW.state
    USING ERRCODE = 'check_violation';
END $$;

-- Not `BEFORE UPDATE OF state`: a column-specific trigger fires on the
-- columns an UPDATE names, not on the ones that change, so another BEFORE
-- UPDATE trigger that assigned NEW.state (one an operator adds, say) in an
-- UPDATE that does not name state would change it unchecked, even if it ran
-- first. (Triggers run in name order and a WHEN sees what earlier ones
-- wrote; one named after this one escapes it with or without OF, as it
-- escaped 0010's.) The claim and the completion name state anyway, so OF
-- would spare only a heartbeat's WHEN, which stops at its first test.
DROP TRIGGER jobs_state_machine ON stampede.jobs;
DROP FUNCTION stampede.check_job_transition();

-- The transitions of 0010 (docs/engine.md), unchanged:
--   pending | failed -> claimed | dead | cancelled
--   claimed -> done | failed | pending | dead | cancelled
--   dead -> pending (redrive)
-- BEFORE triggers run in name order; this one changes nothing, so the order
-- against jobs_updated_at does not matter.
CREATE TRIGGER jobs_state_machine BEFORE UPDATE ON stampede.jobs
  FOR EACH ROW
  WHEN (NEW.state IS DISTINCT FROM OLD.state AND NOT (
       (OLD.state = 'pending' AND NEW.state IN ('claimed', 'dead', 'cancelled'))
    OR (OLD.state = 'failed'  AND NEW.state IN ('claimed', 'dead', 'cancelled'))
    OR (OLD.state = 'claimed' AND NEW.state IN ('done', 'failed', 'pending', 'dead', 'cancelled'))
    OR (OLD.state = 'dead'    AND NEW.state = 'pending')
  ))
  EXECUTE FUNCTION stampede.refuse_job_transition();

-- No SET search_path: under the harness's simulated database clock
-- (docs/time.md) now() here is the simulated one, as it was in the old trigger.
CREATE FUNCTION stampede.touch_job_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at := now();
  RETURN NEW;
END $$;

-- Why `IS DISTINCT FROM now()` and not `IS NOT DISTINCT FROM OLD.updated_at`
-- (fire only when the UPDATE left updated_at alone): an UPDATE that sets
-- updated_at to anything else (`SET updated_at = updated_at - interval '1 h'`,
-- a row copied back from a backup) was overridden by the old trigger, and the
-- rescuer's `w.started_at > j.updated_at` must not read a value from the past.
-- This test gives exactly the old result for every UPDATE: updated_at = now().
--
-- Two UPDATEs of one row in one transaction: the first leaves updated_at =
-- now(), and now() is the transaction's start time, the same for the second.
-- So the second one's WHEN is false, and the value it keeps is the now() the
-- old trigger would have written again: the same value either way.
--
-- pg_catalog.now() by name: a trigger's WHEN, like a column DEFAULT, is bound
-- when it is created, and that is what it would bind. Under the simulated
-- clock the engine's `updated_at = now()` is the simulated time, distinct from
-- the server's, so the function runs and writes the simulated now() again: the
-- same value as before, at a plpgsql call per row in harness runs only.
CREATE TRIGGER jobs_updated_at BEFORE UPDATE ON stampede.jobs
  FOR EACH ROW
  WHEN (NEW.updated_at IS DISTINCT FROM pg_catalog.now())
  EXECUTE FUNCTION stampede.touch_job_updated_at();
