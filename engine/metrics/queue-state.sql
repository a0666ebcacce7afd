-- Queue-state and Postgres-health queries of the QueueStateSampler. They run
-- every few seconds against a table that may hold 300M rows, nearly all of
-- them done, so none of them may touch the done rows: each one rides a
-- partial index (jobs_oldest_idx holds only pending/failed rows,
-- jobs_failed_queue_idx only failed ones, jobs_lease_idx only claimed ones)
-- or reads a statistics view. test/metrics-sampler.test.ts
-- asserts from EXPLAIN that none does a Seq Scan on stampede.jobs.

-- name: ClaimableByQueue
-- One row per queue that has claimable (pending or failed) jobs. Its one
-- parameter, $1, is the round's row budget (roundRowBudget): the rows the
-- round's counts may read in all, whatever the backlog and however many
-- queues. Measured (docs/metrics.md): with a cap of 100,000 rows per queue
-- instead, a round at 2M claimable over 200 queues read 2M index entries, and
-- right after the insert (the visibility map not yet set, so each entry was a
-- heap visit) took seconds.
--
-- The queues and the oldest claimable job of each come from one recursive
-- "loose index scan" over jobs_oldest_idx (queue, run_at; 0020): each step is
-- one index descent to the next queue's first entry, which is that queue's
-- least run_at, so the cost is O(queues · log n), not O(backlog). The oldest
-- due job, the SLO signal, is exact: the least run_at is due if any job is
-- (run_at <= now()), and its age is now() - run_at on the database clock.
-- Before 0020 the oldest came from jobs_due_idx (queue, priority, run_at) as
-- the least of ten probes, one per priority: ten descents per queue, 2,000 of
-- a round's 2,400 at 200 queues and most of its time (docs/metrics.md).
--
-- Depth is counted by index-only scans, claimable and due from
-- jobs_oldest_idx in run_at order, failed from jobs_failed_queue_idx (0005);
-- pending is the difference. Counting the state from the heap instead cost
-- 130-550 ms a round at a 500k backlog against 40-60 ms this way. Half of
-- the budget goes to the claimable counts, the depth an incident is about, and
-- a quarter to the failed counts (the last quarter is DeadLettersByQueue's),
-- split evenly over the queues: each count stops at its share. (At thirds,
-- poison-herd's drain was estimated down to 6,500 jobs left, where the
-- estimate's error passed 50 % of the true depth.) A queue whose count reaches its share is
-- estimated (estimated = true): jobs_due_idx's entries now, less the queues
-- counted exactly, shared evenly by the queues past their share, and never
-- below what was counted. The index's entries now are its current size in
-- pages times its entries per page at the last VACUUM or ANALYZE (the
-- planner's own arithmetic), or a nominal 70 % fill of the entry's width
-- before the first one. Those entries include the dead ones of every job that
-- left pending or failed since the last vacuum (its claim): while a herd
-- drains they pile up, and without a correction the estimate rose as the true
-- depth fell (poison-herd: 35,859 read against 5,771). Each claim leaves one
-- dead entry here and at least one more dead heap tuple that is not here (its
-- completion, failure or lease renewal), so the table's dead tuples
-- (pg_stat_user_tables.n_dead_tup, kept per commit, reset by vacuum) over two
-- bound the dead entries from above (read through pg_stat_get_dead_tuples, the
-- function behind that view, so no catalog is scanned); the claimable entries are taken as the
-- index's entries less that. The count reads a queue's entries oldest first,
-- so the due ones come first: a count that reached a job not yet due counted
-- every due job, and due is exact even when the queue's depth is estimated;
-- when every entry counted was due, due is the claimable estimate (at least
-- the share is due, and the rest is not known). The error is measured in
-- docs/metrics.md.
WITH RECURSIVE queues(queue, oldest) AS (
  (SELECT j.queue, j.run_at FROM stampede.jobs j
    WHERE j.state IN ('pending', 'failed')
    ORDER BY j.queue, j.run_at LIMIT 1)
  UNION ALL
  SELECT n.queue, n.run_at
    FROM queues q
   CROSS JOIN LATERAL (
     SELECT j.queue, j.run_at FROM stampede.jobs j
      WHERE j.state IN ('pending', 'failed') AND j.queue > q.queue
      ORDER BY j.queue, j.run_at LIMIT 1
   ) n
),
listed AS MATERIALIZED (
  SELECT q.queue, q.oldest FROM queues q
),
share AS (
  SELECT greatest(1, $1::int8 / 2 / greatest(1, count(*)))::int8 AS n,
         greatest(1, $1::int8 / 4 / greatest(1, count(*)))::int8 AS nf
    FROM listed
),
counted AS (
  SELECT l.queue, l.oldest, d.claimable, d.due, f.failed,
         d.claimable >= s.n AS over, f.failed >= s.nf AS failed_over
    FROM listed l
   CROSS JOIN share s
   CROSS JOIN LATERAL (
     SELECT count(*)::int8 AS claimable,
            count(*) FILTER (WHERE x.run_at <= now())::int8 AS due
       FROM (SELECT j.run_at FROM stampede.jobs j
              WHERE j.state IN ('pending', 'failed') AND j.queue = l.queue
              ORDER BY j.run_at LIMIT s.n) x
   ) d
   CROSS JOIN LATERAL (
     SELECT count(*)::int8 AS failed
       FROM (SELECT 1 FROM stampede.jobs j
              WHERE j.state = 'failed' AND j.queue = l.queue
              LIMIT s.nf) x
   ) f
),
-- Entries per index now: (pages now) x (entries per page). The claimable
-- entries are jobs_due_idx's, not jobs_oldest_idx's, though the counts read the
-- latter: btree deduplication packs equal keys into one posting list, and
-- jobs_oldest_idx's keys repeat for every job of one enqueue (run_at is the
-- transaction's now()), so its entries per page swing with how jobs were
-- enqueued; jobs_due_idx ends in the job's id, unique, and is never
-- deduplicated. Nominal widths: jobs_due_idx 44 bytes (tuple header, an
-- 8-character queue, priority, run_at, id, line pointer), jobs_failed_queue_idx 28.
entries AS (
  SELECT greatest(0, max(e.n) FILTER (WHERE e.kind = 'claimable') - d.dead / 2) AS claimable,
         max(e.n) FILTER (WHERE e.kind = 'failed') AS failed
    FROM (SELECT i.kind,
                 pg_relation_size(c.oid) / current_setting('block_size')::float8
                 * CASE WHEN c.reltuples > 0 AND c.relpages > 0 THEN c.reltuples / c.relpages
                        ELSE current_setting('block_size')::float8 * 0.7 / i.nominal_bytes END AS n
            FROM (VALUES ('claimable', 'stampede.jobs_due_idx'::regclass, 44),
                         ('failed', 'stampede.jobs_failed_queue_idx'::regclass, 28)) i(kind, idx, nominal_bytes)
            JOIN pg_class c ON c.oid = i.idx) e
   CROSS JOIN (SELECT pg_stat_get_dead_tuples('stampede.jobs'::regclass)::float8 AS dead) d
   GROUP BY d.dead
),
spread AS (
  SELECT c.*,
         count(*) FILTER (WHERE c.over) OVER () AS over_n,
         count(*) FILTER (WHERE c.failed_over) OVER () AS failed_over_n,
         coalesce(sum(c.claimable) FILTER (WHERE NOT c.over) OVER (), 0) AS claimable_exact,
         coalesce(sum(c.failed) FILTER (WHERE NOT c.failed_over) OVER (), 0) AS failed_exact
    FROM counted c
),
estimated AS (
  SELECT s.queue, s.oldest, s.over, s.due, s.claimable AS claimable_counted,
         CASE WHEN s.over THEN greatest(s.claimable, round((e.claimable - s.claimable_exact) / s.over_n))::int8
              ELSE s.claimable END AS claimable,
         CASE WHEN s.failed_over THEN greatest(s.failed, round((e.failed - s.failed_exact) / s.failed_over_n))::int8
              ELSE s.failed END AS failed
    FROM spread s CROSS JOIN entries e
)
SELECT x.queue,
       x.claimable,
       least(x.failed, x.claimable) AS failed,
       CASE WHEN x.over AND x.due = x.claimable_counted THEN x.claimable ELSE x.due END AS due,
       x.over AS estimated,
       CASE WHEN x.oldest <= now() THEN extract(epoch FROM now() - x.oldest) ELSE 0 END::float8 AS oldest_due_age_s
  FROM estimated x
 ORDER BY x.queue;

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
-- Dead letters per queue: the queues by a loose index scan over
-- dead_letters_queue_idx (one descent per queue), each counted up to its
-- share of the last quarter of the round's row budget ($1), so a poison herd
-- that dead-letters a million jobs costs no more than a few. A queue past its
-- share is estimated: the table's live rows (pg_stat_user_tables, a counter
-- every backend keeps within about a second, not a statistic) less the queues
-- counted exactly, shared evenly by the rest, never below what was counted.
-- Whether a queue has any dead letter (the alert's "> 0") is always exact:
-- its count reads at least one row when there is one.
WITH RECURSIVE queues(queue) AS (
  (SELECT d.queue FROM stampede.dead_letters d ORDER BY d.queue LIMIT 1)
  UNION ALL
  SELECT (SELECT d.queue FROM stampede.dead_letters d WHERE d.queue > q.queue ORDER BY d.queue LIMIT 1)
    FROM queues q
   WHERE q.queue IS NOT NULL
),
listed AS MATERIALIZED (
  SELECT q.queue FROM queues q WHERE q.queue IS NOT NULL
),
share AS (
  SELECT greatest(1, $1::int8 / 4 / greatest(1, count(*)))::int8 AS n FROM listed
),
counted AS (
  SELECT l.queue, c.dead, c.dead >= s.n AS over,
         count(*) FILTER (WHERE c.dead >= s.n) OVER () AS over_n,
         coalesce(sum(c.dead) FILTER (WHERE c.dead < s.n) OVER (), 0) AS dead_exact
    FROM listed l
   CROSS JOIN share s
   CROSS JOIN LATERAL (
     SELECT count(*)::int8 AS dead
       FROM (SELECT 1 FROM stampede.dead_letters d WHERE d.queue = l.queue LIMIT s.n) x
   ) c
)
SELECT c.queue,
       CASE WHEN c.over THEN greatest(c.dead, round((t.n_live_tup - c.dead_exact)::float8 / c.over_n))::int8
            ELSE c.dead END AS dead,
       c.over AS estimated
  FROM counted c
  LEFT JOIN pg_stat_user_tables t ON t.relid = 'stampede.dead_letters'::regclass
 ORDER BY c.queue;

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

-- name: LocalStatementTimeout
-- The statement_timeout of the transaction it runs in, $1 in ms (set_config's
-- third argument makes it local, as SET LOCAL: undone at the transaction's
-- end). A sampler's round and every page of the dashboard
-- (engine/dashboard/routes.ts) run under one: neither may become the load,
-- and neither may wait without end behind a lock on the jobs table.
SELECT set_config('statement_timeout', $1::int::text, true);
