-- The held-horizon workload's own readings (bench/workloads/horizon.ts).
-- Nothing here runs inside stampede.

-- name: HotTableState
-- Dead tuples and bytes of a queue's hot table ($1, a qualified name; a
-- partitioned parent is summed over its partitions, as pg-boss keeps each
-- queue in its own). Dead tuples are the cumulative statistics every backend
-- keeps (flushed within about a second, reset by VACUUM): not a scan, so the
-- reading adds nothing to the bloat it measures.
SELECT coalesce(sum(pg_stat_get_dead_tuples(t.relid)), 0)::int8 AS dead_tuples,
       coalesce(sum(pg_table_size(t.relid)), 0)::int8 AS table_bytes,
       coalesce(sum(pg_indexes_size(t.relid)), 0)::int8 AS index_bytes
  FROM (SELECT p.relid FROM pg_partition_tree($1::regclass) p WHERE p.isleaf AND p.relid <> $1::regclass
        UNION ALL
        -- A plain table is no partition tree: itself.
        SELECT c.oid FROM pg_class c WHERE c.oid = $1::regclass AND c.relkind = 'r') t;

-- name: LockWaits
-- Backends of this database waiting on a lock now, and the longest wait so
-- far (pg_locks.waitstart, PostgreSQL 14+). Sampled a few times a second: a
-- wait shorter than the sampling period can be missed, one over 300 ms (the
-- published profile's figure) cannot.
SELECT count(*)::int AS waiting,
       coalesce(max(extract(epoch FROM clock_timestamp() - l.waitstart)) * 1000, 0)::float8 AS longest_ms
  FROM pg_locks l
  JOIN pg_stat_activity a ON a.pid = l.pid
 WHERE NOT l.granted
   AND a.datname = current_database();

-- name: HorizonAge
-- How old the oldest snapshot of this database is: what the readers hold.
SELECT coalesce(max(extract(epoch FROM clock_timestamp() - a.xact_start)), 0)::float8 AS age_s
  FROM pg_stat_activity a
 WHERE a.datname = current_database()
   AND a.backend_xmin IS NOT NULL
   AND a.pid <> pg_backend_pid();

-- name: ReaderHold
-- A reader's statement inside its REPEATABLE READ transaction: the first one
-- takes the snapshot the transaction keeps to its end. What the analytics
-- query reads does not matter to the queue, only the snapshot it holds, so it
-- sleeps, in short steps so the bench can end a hold promptly.
SELECT pg_sleep(0.5);

-- name: StockAutovacuum
-- The "before" of stampede's autovacuum settings for the hot table
-- (migrations 0006 and 0014): the server's defaults.
ALTER TABLE stampede.jobs RESET (
  autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold,
  autovacuum_analyze_scale_factor, autovacuum_analyze_threshold,
  autovacuum_vacuum_insert_scale_factor, autovacuum_vacuum_insert_threshold,
  autovacuum_vacuum_cost_delay, vacuum_index_cleanup
);
