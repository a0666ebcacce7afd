-- Fewer writes per claim and completion (issue 15): one index of claimed rows
-- where there were two, and the queue-name rule checked only when a name is
-- written.
--
-- 1. jobs_lease_idx (0001: lease_expires_at) and jobs_claimed_queue_idx
--    (0010: queue) held the same rows, the claimed ones, so every claim and
--    every heartbeat wrote an entry into each. One index on (queue,
--    lease_expires_at) serves both readers:
--      * the per-queue count of claimed rows (claim_gate's in-flight limit,
--        KnownQueue) is a prefix scan of at most the queue's claimed rows, as
--        before;
--      * the lease rescuer's `lease_expires_at < now()` reads the claimed
--        entries, which are bounded by what the fleet holds in flight
--        (workers x (concurrency + claimAhead)), not by the table; the
--        rescuer runs every few seconds, not per job.
--    It keeps the name jobs_lease_idx.
-- 2. The queue-name rule moves from a CHECK constraint, which Postgres
--    evaluates on every UPDATE of a row whatever the UPDATE changes, to a
--    trigger on INSERT and on UPDATE OF queue: claims, heartbeats and
--    completions never name the queue, so they no longer pay for it. The rule
--    itself is the trigger's WHEN clause (a plain expression, as cheap as the
--    CHECK on an insert); its function only raises, with the SQLSTATE (23514)
--    and constraint name (jobs_queue_check) the CHECK raised, so a caller
--    cannot tell the difference (test/queue-name-check.test.ts). An UPDATE
--    that writes the queue names it, so no writer escapes the rule; rows
--    already in the table passed the identical CHECK.
-- Measured (docs/performance.md, "Fewer writes per claim and completion"),
-- claim 1,000 then complete them, one client, medians of 45: the trigger
-- 20.5 -> 19.1 ms of database time per 1,000 jobs; one index of claimed rows,
-- the claim alone 13.0 -> 11.0 ms.
--
-- Building the index scans the whole table under a lock that blocks writes,
-- as 0010's index did: migrate while the hot table is small (the archiver
-- keeps it to the last hour of finished jobs) or in a quiet moment.

CREATE INDEX jobs_claimed_lease_idx ON stampede.jobs (queue, lease_expires_at) WHERE state = 'claimed';
DROP INDEX stampede.jobs_claimed_queue_idx;
DROP INDEX stampede.jobs_lease_idx;
ALTER INDEX stampede.jobs_claimed_lease_idx RENAME TO jobs_lease_idx;

-- Only raises: its trigger's WHEN clause has found the name breaks the rule.
-- (Attached without that WHEN, it would refuse every insert: fails closed.)
CREATE FUNCTION stampede.refuse_queue_name() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'new row for relation "jobs" violates check constraint "jobs_queue_check"'
    USING ERRCODE = 'check_violation', CONSTRAINT = 'jobs_queue_check', SCHEMA = 'stampede', TABLE = 'jobs',
          DETAIL = 'A queue name is 1 to 128 of A-Z a-z 0-9 _ . : -';
END $$;

ALTER TABLE stampede.jobs DROP CONSTRAINT jobs_queue_check;

-- The rule of 0011, unchanged. A NULL name is left to the column's NOT NULL.
CREATE TRIGGER jobs_queue_name BEFORE INSERT OR UPDATE OF queue ON stampede.jobs
  FOR EACH ROW
  WHEN (NOT (length(NEW.queue) BETWEEN 1 AND 128
             AND ltrim(NEW.queue, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:-') = ''))
  EXECUTE FUNCTION stampede.refuse_queue_name();
