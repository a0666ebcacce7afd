-- Dead letters carry a reason code beside their message (issue 40), and one
-- function writes them all.
--
-- Before this, three statements (FailJob, RescueExpiredLeases, DeadLetterJob)
-- each built a dead-letter row and its message, and the metrics and the
-- worker's log recovered the kind of death from the message with a regular
-- expression. Now each path names its code and calls stampede.dead_letter,
-- which checks the job is dead, words the message from the code and writes
-- the row. The codes, by the path that decides them:
--   attempts_exhausted  FailJob: the handler threw on the last attempt of its budget
--   timeout             FailJob: the last attempt of its budget ran past its timeout
--   lease_expired       RescueExpiredLeases: the last attempt of its budget lost its lease
--   crash_loop          RescueExpiredLeases: convicted, it crashed its worker maxCrashes times
--   operator            DeadLetterJob: dead-lettered by hand (control verb, CLI, dashboard)
-- engine/dead-letters.ts lists the same set (DEAD_LETTER_CODES); a test holds them equal.
--
-- `reason` stays the human message, worded as before ("attempts exhausted:
-- <last error>", "crashed its worker N times", "dead-lettered by <by>:
-- <why>"), so nothing that shows or searches it changes.
ALTER TABLE stampede.dead_letters ADD COLUMN code text;

-- Rows written before this migration: the code from the message the three
-- statements wrote, by the same prefixes the regular expression read. A
-- message none of them wrote (a row inserted by hand) counts as `operator`.
UPDATE stampede.dead_letters
   SET code = CASE
                WHEN reason LIKE 'attempts exhausted: JobTimeoutError:%' THEN 'timeout'
                WHEN reason LIKE 'attempts exhausted: lease expired%' THEN 'lease_expired'
                WHEN reason LIKE 'attempts exhausted%' THEN 'attempts_exhausted'
                WHEN reason LIKE 'crashed its worker%' THEN 'crash_loop'
                ELSE 'operator'
              END;

ALTER TABLE stampede.dead_letters
  ALTER COLUMN code SET NOT NULL,
  ADD CONSTRAINT dead_letters_code_check
    CHECK (code IN ('attempts_exhausted', 'timeout', 'lease_expired', 'crash_loop', 'operator'));

-- The one writer of a dead-letter row. `job` is the job's row as its caller
-- left it, already dead (the caller's own statement decided that, under its
-- own fence or lock); the message is worded from the code and the row:
-- last_error is the handler's error (FailJob), the lost lease (the rescuer)
-- or "dead-lettered by <by>: <why>" (DeadLetterJob). Returns the row written,
-- or the one the job already had (written once: a redrive removes it).
CREATE FUNCTION stampede.dead_letter(job stampede.jobs, dead_code text) RETURNS stampede.dead_letters
LANGUAGE plpgsql AS $$
DECLARE
  written stampede.dead_letters;
BEGIN
  IF job.state IS DISTINCT FROM 'dead' THEN
    RAISE EXCEPTION 'stampede.dead_letter: job % is %, expected dead', job.id, job.state;
  END IF;
  INSERT INTO stampede.dead_letters (job_id, queue, payload, attempts, code, reason, errors)
  VALUES (job.id, job.queue, job.payload, job.attempts, dead_code,
          CASE dead_code
            WHEN 'crash_loop' THEN 'crashed its worker ' || job.crash_count || ' times'
            WHEN 'operator' THEN job.last_error
            ELSE 'attempts exhausted: ' || job.last_error
          END,
          job.errors)
  ON CONFLICT (job_id) DO NOTHING
  RETURNING * INTO written;
  IF NOT FOUND THEN
    SELECT * INTO written FROM stampede.dead_letters d WHERE d.job_id = job.id;
  END IF;
  RETURN written;
END $$;
