-- Tenants within a queue (issue 44): a job may carry a fairness key (a
-- tenant, an account); a queue may cap how many jobs of one key run at once
-- and share its claims across keys by weight. Queues without the setting and
-- jobs without a key pay nothing here: the key is NULL, the two indexes below
-- are partial on a key, and the claim's plain path is unchanged
-- (engine/worker/worker.sql, ClaimJobs; measured in docs/operating.md).

-- NULL: no key. Keys are compared as text (C order of the column's collation
-- is not needed: the claim only walks them in index order).
ALTER TABLE stampede.jobs
  ADD COLUMN fairness_key text CHECK (length(fairness_key) BETWEEN 1 AND 512);

--   max_in_flight_per_key  at most this many jobs of one key claimed at once
--                          across every worker; setting it makes the queue
--                          fair: its keyed jobs are claimed by a walk over
--                          the keys (ClaimJobs), not in plain due order.
--   key_cursor             where the walk stopped: the next claim starts
--                          after it, so every key with due jobs is visited in
--                          turn (round robin). Written only by claims of a
--                          fair queue, under the queue's exclusive lock.
--   sequential             each key's jobs run one at a time in enqueue order
--                          (id order): only a key's head, its oldest job not
--                          yet done, dead or cancelled, may be claimed, and
--                          only when nothing of the key is in flight. A head
--                          in backoff, in flight or crashed (a suspect) holds
--                          the key. Makes the queue fair with a cap of 1.
ALTER TABLE stampede.queue_settings
  ADD COLUMN max_in_flight_per_key integer CHECK (max_in_flight_per_key > 0),
  ADD COLUMN sequential boolean NOT NULL DEFAULT false,
  ADD COLUMN key_cursor text;

-- A key's weight in its queue's share: a visit of the walk offers up to
-- `weight` of its jobs. Keys without a row weigh 1. No foreign key to jobs:
-- a weight may be set before the key's first job.
CREATE TABLE stampede.key_weights (
  queue  text NOT NULL,
  key    text NOT NULL CHECK (length(key) BETWEEN 1 AND 512),
  weight integer NOT NULL CHECK (weight BETWEEN 1 AND 1000),
  PRIMARY KEY (queue, key)
);

-- The walk: the next key after the cursor that has claimable jobs, and that
-- key's best jobs, each one probe of this index. Only keyed rows have
-- entries. priority DESC: a key's jobs are offered highest priority first.
CREATE INDEX jobs_key_due_idx ON stampede.jobs (queue, fairness_key, priority DESC, run_at, id)
  WHERE state IN ('pending', 'failed') AND crash_count = 0 AND fairness_key IS NOT NULL;

-- A sequential key's head: its oldest unfinished job, one probe.
CREATE INDEX jobs_key_head_idx ON stampede.jobs (queue, fairness_key, id)
  WHERE state IN ('pending', 'failed', 'claimed') AND fairness_key IS NOT NULL;

-- The head of `key` in `queue` now (NULL: none). VOLATILE plpgsql, as
-- key_in_flight below: a fresh snapshot after the claim's lock.
CREATE FUNCTION stampede.key_head(queue text, key text) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RETURN (SELECT min(j.id) FROM stampede.jobs j
           WHERE j.queue = $1 AND j.fairness_key = $2 AND j.state IN ('pending', 'failed', 'claimed'));
END $$;

-- A key's jobs in flight, for the per-key cap (fair_pick, ClaimSuspect): at most the key's claimed rows.
CREATE INDEX jobs_key_claimed_idx ON stampede.jobs (queue, fairness_key)
  WHERE state = 'claimed' AND fairness_key IS NOT NULL;

-- Jobs of `key` in `queue` claimed now. VOLATILE plpgsql: a fresh snapshot
-- at each call, so the claim, which calls it after claim_gate took the fair
-- queue's exclusive lock, counts every claim committed before it.
CREATE FUNCTION stampede.key_in_flight(queue text, key text) RETURNS int
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RETURN (SELECT count(*) FROM stampede.jobs j WHERE j.state = 'claimed' AND j.queue = $1 AND j.fairness_key = $2);
END $$;

-- claim_gate as in 0010, and for a queue with max_in_flight_per_key: the
-- exclusive lock (claims of a fair queue take turns, so the per-key counts
-- and the cursor are the only truth), `per_key` (the cap) and `key_cursor`.
-- A fair queue's allowance is what the claim wants, cut by the queue's other
-- limits as before: never NULL, so the claim sizes its walk by it.
DROP FUNCTION stampede.claim_gate(text[], int);
CREATE FUNCTION stampede.claim_gate(queues text[], wanted int)
RETURNS TABLE (queue text, paused boolean, allowance int, per_key int, key_cursor text, sequential boolean)
LANGUAGE plpgsql VOLATILE ROWS 4 AS $$
#variable_conflict use_column
DECLARE
  name      text;
  s         stampede.queue_settings;
  exclusive boolean;
  limited   boolean;
  room      int;
  claimed   int;
  tokens    float8;
  at        timestamptz;
BEGIN
  FOR name IN SELECT DISTINCT u.q FROM unnest(queues) AS u(q) ORDER BY u.q LOOP
    SELECT * INTO s FROM stampede.queue_settings qs WHERE qs.queue = name;
    exclusive := FOUND AND (s.max_in_flight IS NOT NULL OR s.max_starts_per_second IS NOT NULL OR s.max_in_flight_per_key IS NOT NULL OR s.sequential);
    IF exclusive THEN
      PERFORM pg_advisory_xact_lock(stampede.queue_lock_key(name));
    ELSE
      PERFORM pg_advisory_xact_lock_shared(stampede.queue_lock_key(name));
    END IF;
    s := NULL;
    SELECT * INTO s FROM stampede.queue_settings qs WHERE qs.queue = name;
    limited := s.max_in_flight IS NOT NULL OR s.max_starts_per_second IS NOT NULL OR s.max_in_flight_per_key IS NOT NULL OR coalesce(s.sequential, false);
    queue := name;
    paused := coalesce(s.paused, false);
    allowance := NULL;
    sequential := coalesce(s.sequential, false);
    per_key := CASE WHEN sequential THEN 1 ELSE s.max_in_flight_per_key END;
    key_cursor := s.key_cursor;
    IF paused THEN
      allowance := CASE WHEN limited THEN 0 END;
    ELSIF limited THEN
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

-- A fair queue's pick for one claim: the ids of up to `wanted` of its keyed
-- jobs, in the order of the share, and the cursor moved to where it stopped.
-- Called by ClaimJobs (engine/worker/worker.sql) for each fair queue, after
-- claim_gate took that queue's exclusive lock; VOLATILE, so its queries see
-- every claim committed before the lock (a fresh snapshot each), and a plain
-- queue's claim never plans or runs any of it (its plan stays as it was:
-- test/claim-plan.test.ts).
--
-- The walk: starting after `cursor`, the next key with claimable jobs, then
-- the next, wrapping around once, for at most `wanted` keys: one probe of
-- jobs_key_due_idx each, however many keys or jobs the queue holds. Each
-- visited key offers its best jobs (priority, then due time) up to its room
-- under `per_key` (jobs in flight counted now); its i-th job has the share
-- i / weight. The pick takes the lowest shares, ties in walk order: every
-- visited key gets one job (`weight` jobs) per turn before any gets more.
-- The cursor is the key of the last job picked, so the next claim goes on
-- with the key after it.
--
-- In a sequential queue the cap is 1 and a key offers only its head (and
-- only when it is due and no suspect: a crashed head is the suspect claim's).
--
-- The bound (docs/operating.md, "Tenants: per-key limits and the fair
-- share"): a key with a job due is visited within ceil(K / wanted) claims of
-- its queue (K: keys with jobs due), and between two visits of it every other
-- key j starts at most weight_j jobs per turn. A flood of one key does not
-- delay another key's job by more than one turn of the keys.
CREATE FUNCTION stampede.fair_pick(q text, per_key int, wanted int, cursor text, sequential boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql VOLATILE ROWS 16 AS $$
DECLARE
  ids  bigint[];
  last text;
BEGIN
  WITH RECURSIVE walk(key, n, first, wrapped) AS (
    SELECT s.key, 1, s.key, false
      FROM (SELECT coalesce((SELECT min(j.fairness_key) FROM stampede.jobs j
                              WHERE j.queue = q AND j.fairness_key > cursor
                                AND j.state IN ('pending', 'failed') AND j.crash_count = 0 AND j.run_at <= now()),
                            (SELECT min(j.fairness_key) FROM stampede.jobs j
                              WHERE j.queue = q AND j.fairness_key IS NOT NULL
                                AND j.state IN ('pending', 'failed') AND j.crash_count = 0 AND j.run_at <= now())) AS key) s
    UNION ALL
    SELECT x.key, w.n + 1, w.first, x.wrapped
      FROM walk w
     CROSS JOIN LATERAL (SELECT min(j.fairness_key) AS key FROM stampede.jobs j
                          WHERE j.queue = q AND j.fairness_key > w.key
                            AND j.state IN ('pending', 'failed') AND j.crash_count = 0 AND j.run_at <= now()) nx
     CROSS JOIN LATERAL (
            SELECT CASE WHEN nx.key IS NOT NULL THEN nx.key WHEN NOT w.wrapped THEN
                     (SELECT min(j.fairness_key) FROM stampede.jobs j
                       WHERE j.queue = q AND j.fairness_key IS NOT NULL
                         AND j.state IN ('pending', 'failed') AND j.crash_count = 0 AND j.run_at <= now()) END AS key,
                   w.wrapped OR nx.key IS NULL AS wrapped
          ) x
     WHERE w.key IS NOT NULL AND NOT (w.wrapped AND w.key >= w.first) AND w.n < wanted
  ), offered AS (
    SELECT k.id, w.key, k.r::float8 / s.weight AS share, w.n
      FROM walk w
     CROSS JOIN LATERAL (
            SELECT coalesce((SELECT kw.weight FROM stampede.key_weights kw WHERE kw.queue = q AND kw.key = w.key), 1) AS weight,
                   (SELECT count(*) FROM stampede.jobs j WHERE j.state = 'claimed' AND j.queue = q AND j.fairness_key = w.key) AS busy
          ) s
     CROSS JOIN LATERAL (
            SELECT t.id, row_number() OVER () AS r
              FROM (SELECT j.id
                      FROM stampede.jobs j
                     WHERE j.queue = q AND j.fairness_key = w.key
                       AND j.state IN ('pending', 'failed') AND j.crash_count = 0 AND j.run_at <= now()
                       AND (NOT sequential OR j.id = stampede.key_head(q, w.key))
                     ORDER BY j.priority DESC, j.run_at, j.id
                     LIMIT greatest(least(per_key - s.busy, wanted), 0)) t
          ) k
     WHERE w.key IS NOT NULL AND NOT (w.wrapped AND w.key >= w.first)
  ), picked AS (
    SELECT o.id, o.key, o.share, o.n FROM offered o ORDER BY o.share, o.n LIMIT wanted
  )
  SELECT array_agg(p.id ORDER BY p.share, p.n), (array_agg(p.key ORDER BY p.share DESC, p.n DESC))[1]
    INTO ids, last
    FROM picked p;
  IF last IS NOT NULL THEN
    UPDATE stampede.queue_settings s SET key_cursor = last WHERE s.queue = q;
  END IF;
  RETURN QUERY SELECT unnest(ids);
END $$;
