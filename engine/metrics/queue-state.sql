-- Queue-state and Postgres-health queries of the QueueStateSampler. They run
-- every few seconds against a table that may hold 300M rows, nearly all of
-- them done, so none of them may touch the done rows: each one rides a
-- partial index (jobs_due_idx holds only pending/failed rows,
-- jobs_failed_queue_idx only failed ones, jobs_lease_idx only claimed ones)
-- or reads a statistics view. test/metrics-sampler.test.ts
-- asserts from EXPLAIN that none does a Seq Scan on stampede.jobs.

-- name: ClaimableByQueue
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

-- name: ClaimedByQueue
-- Claimed jobs ride jobs_lease_idx (WHERE state = 'claimed'): at most
-- workers x concurrency rows. overdue: leases already expired that the
-- rescuer has not handed back yet.
SELECT j.queue,
       count(*)::int8 AS claimed,
       count(*) FILTER (WHERE j.lease_expires_at < now())::int8 AS overdue
  FROM stampede.jobs j
 WHERE j.state = 'claimed'
 GROUP BY j.queue
 ORDER BY j.queue;

-- name: QueueControls
-- Paused and limited queues (migrations/0010_control.sql): a small table, one
-- row per configured queue. start_tokens: the start-rate bucket as of now.
SELECT s.queue, s.paused, s.max_in_flight, s.max_starts_per_second,
       stampede.start_tokens(s, clock_timestamp()) AS start_tokens
  FROM stampede.queue_settings s
 WHERE s.paused OR s.max_in_flight IS NOT NULL OR s.max_starts_per_second IS NOT NULL
 ORDER BY s.queue;

-- name: DeadLettersByQueue
-- The dead-letter table is one row per dead job and small by design (a
-- redrive removes the row), so an exact count is cheap.
SELECT queue, count(*)::int8 AS dead
  FROM stampede.dead_letters
 GROUP BY queue
 ORDER BY queue;

-- name: JobsTableHealth
-- Cumulative statistics, not a scan: n_live_tup and n_dead_tup are kept up to
-- date by every backend (flushed within about a second) and reset by VACUUM.
SELECT coalesce(s.n_live_tup, 0)::int8 AS live_tuples,
       coalesce(s.n_dead_tup, 0)::int8 AS dead_tuples
  FROM pg_stat_user_tables s
 WHERE s.relid = 'stampede.jobs'::regclass;

-- name: DoneExact
-- Only when the sampler is configured with doneCount: 'exact' (small
-- harness databases). This IS a scan of every done row; never the default.
SELECT count(*)::int8 AS done FROM stampede.jobs WHERE state = 'done';

-- name: XminHorizon
-- What holds back the xmin horizon of this database, and so stops VACUUM
-- from removing the dead tuples that done and retried jobs leave behind:
--   backend          open transactions or snapshots of sessions connected to
--                    this database (and walsenders, which carry a standby's
--                    hot_standby_feedback). Autovacuum workers are left out:
--                    VACUUM's own snapshot is ignored when the horizon is
--                    computed. The sampler's own session is left out too.
--   prepared         two-phase transactions left prepared (they survive restarts).
--   replication_slot a slot's xmin (physical slots with hot_standby_feedback).
--                    Slots carry no timestamp, so only their age in xids.
-- Sessions in other databases do not hold back this database's tables.
-- Seeing other roles' sessions needs pg_monitor (or pg_read_all_stats).
-- xact_start and prepared are stamped by the server's own clock, so they are
-- read against pg_catalog.now() by name: the same function as now() in
-- production, and the server's clock under a simulated database clock too
-- (docs/time.md), which moves job time, not the server's own stamps.
SELECT 'backend' AS holder,
       max(extract(epoch FROM pg_catalog.now() - a.xact_start))::float8 AS age_s,
       max(greatest(age(a.backend_xmin), age(a.backend_xid)))::int8 AS age_xids
  FROM pg_stat_activity a
 WHERE (a.backend_xmin IS NOT NULL OR a.backend_xid IS NOT NULL)
   AND a.pid <> pg_backend_pid()
   AND a.backend_type <> 'autovacuum worker'
   AND (a.datname = current_database() OR a.backend_type = 'walsender')
UNION ALL
SELECT 'prepared',
       max(extract(epoch FROM pg_catalog.now() - p.prepared))::float8,
       max(age(p.transaction))::int8
  FROM pg_prepared_xacts p
 WHERE p.database = current_database()
UNION ALL
SELECT 'replication_slot',
       NULL::float8,
       max(age(r.xmin))::int8
  FROM pg_replication_slots r
 WHERE r.xmin IS NOT NULL;
