-- The queue-state round as it was before issue 47 (engine/metrics/queue-state.sql
-- at that time), kept here only as the sampler bench's baseline: each queue
-- counted up to $1 rows (depthCapRows, 100,000), and dead letters by a GROUP BY
-- of the whole table. The rest of the round is the engine's own.

-- name: BaselineClaimableByQueue
-- One row per queue that has claimable (pending or failed) jobs.
--
-- The distinct queues come from a recursive "loose index scan" over
-- jobs_due_idx: each step is one index descent to the next queue name, so the
-- cost is O(queues · log n), not O(backlog).
--
-- The oldest due job per queue, the SLO signal, is 10 more descents per queue:
-- the index is ordered (queue, priority, run_at), so min(run_at) per
-- (queue, priority) is the first entry at or after the queue/priority prefix;
-- priorities are 0..9 by the table's CHECK constraint. A plain
-- min(run_at) ... WHERE queue = $q would instead read every index entry of
-- the queue (the index is not ordered by run_at within a queue). Ages come
-- from the database clock: now() - run_at.
--
-- Depth is counted by index-only scans, claimable and due from jobs_due_idx
-- (queue and run_at are in it), failed from jobs_failed_queue_idx (0005);
-- pending is the difference. Counting the state from the heap instead cost
-- 130-550 ms a round at a 500k backlog against 40-60 ms this way. Each count
-- stops at $1 rows per queue (capped = true): beyond that the exact figure
-- changes no decision, and the oldest age already says how bad it is.
WITH RECURSIVE queues(queue) AS (
  (SELECT j.queue FROM stampede.jobs j
    WHERE j.state IN ('pending', 'failed')
    ORDER BY j.queue LIMIT 1)
  UNION ALL
  SELECT (SELECT j.queue FROM stampede.jobs j
           WHERE j.state IN ('pending', 'failed') AND j.queue > q.queue
           ORDER BY j.queue LIMIT 1)
    FROM queues q
   WHERE q.queue IS NOT NULL
)
SELECT q.queue,
       d.claimable,
       f.failed,
       d.due,
       (d.claimable >= $1::int8 OR f.failed >= $1::int8) AS capped,
       coalesce(extract(epoch FROM now() - o.oldest_due), 0)::float8 AS oldest_due_age_s
  FROM queues q
 CROSS JOIN LATERAL (
   SELECT count(*)::int8 AS claimable,
          count(*) FILTER (WHERE s.run_at <= now())::int8 AS due
     FROM (SELECT j.run_at FROM stampede.jobs j
            WHERE j.state IN ('pending', 'failed') AND j.queue = q.queue
            LIMIT $1::int8) s
 ) d
 CROSS JOIN LATERAL (
   SELECT count(*)::int8 AS failed
     FROM (SELECT 1 FROM stampede.jobs j
            WHERE j.state = 'failed' AND j.queue = q.queue
            LIMIT $1::int8) s
 ) f
 CROSS JOIN LATERAL (
   SELECT min(p.run_at) AS oldest_due
     FROM generate_series(0, 9) AS pr(n)
    CROSS JOIN LATERAL (
      SELECT j.run_at FROM stampede.jobs j
       WHERE j.state IN ('pending', 'failed') AND j.queue = q.queue
         AND j.priority = pr.n::smallint AND j.run_at <= now()
       ORDER BY j.run_at LIMIT 1
    ) p
 ) o
 WHERE q.queue IS NOT NULL
 ORDER BY q.queue;

-- name: BaselineDeadLettersByQueue
-- The dead-letter table is one row per dead job and small by design (a
-- redrive removes the row), so an exact count is cheap.
SELECT queue, count(*)::int8 AS dead
  FROM stampede.dead_letters
 GROUP BY queue
 ORDER BY queue;


-- name: SamplerFillDone
-- $1 finished rows over $2 queues: the history a round must never read.
INSERT INTO stampede.jobs (queue, state, finished_at, run_at)
SELECT 'q' || (g % $2::int), 'done', now(), now() - interval '1 day' FROM generate_series(1, $1::int) g;

-- name: SamplerFillClaimable
-- $1 claimable rows over $2 queues, one statement, due within the last 10
-- minutes, across the ten priorities; one in ten failed (a retry due).
INSERT INTO stampede.jobs (queue, state, attempts, priority, run_at)
SELECT 'q' || (g % $2::int),
       (CASE WHEN g % 10 = 0 THEN 'failed' ELSE 'pending' END)::stampede.job_state,
       CASE WHEN g % 10 = 0 THEN 1 ELSE 0 END,
       (g / $2::int) % 10,
       now() - (g % 600) * interval '1 s'
  FROM generate_series(1, $1::int) g;

-- name: SamplerTrueDepth
-- The true claimable depth per queue, by a plain GROUP BY: what the estimates are judged against.
SELECT queue, count(*)::int8 AS claimable FROM stampede.jobs WHERE state IN ('pending', 'failed') GROUP BY queue;
