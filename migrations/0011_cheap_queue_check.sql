-- The queue-name rule of stampede.jobs (0001), without a regular expression.
--
-- A table CHECK constraint is evaluated on every UPDATE of a row, whatever the
-- UPDATE changes: each claim, heartbeat and completion re-ran the queue name's
-- regular expression. The same rule spelled with length() and ltrim() (strip
-- every allowed character; nothing may be left) refuses and accepts exactly
-- the same names (test/queue-name-check.test.ts) at a fraction of the cost:
-- interleaved A/B of claim-500-then-complete, 9 % less database time per job
-- (docs/performance.md). Measured and not taken: a domain type for the column
-- (12 %, its check runs only when a name is written), because an untyped
-- parameter compared with the column and also used as text elsewhere in one
-- statement then fails with "inconsistent types deduced" (enqueue did).
--
-- NOT VALID: no scan of the table under the ALTER's lock. Every existing row
-- passed the identical rule being dropped; every new or changed row is checked.
ALTER TABLE stampede.jobs DROP CONSTRAINT jobs_queue_check;

ALTER TABLE stampede.jobs ADD CONSTRAINT jobs_queue_check
  CHECK (length(queue) BETWEEN 1 AND 128
         AND ltrim(queue, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:-') = '') NOT VALID;
