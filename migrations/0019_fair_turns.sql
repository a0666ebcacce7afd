-- The fair share across claims (issue 44; the key-weights finding in
-- harness/promises/ledger.ts). 0016's fair_pick ranked a key's i-th job at
-- share i / weight within one claim and kept only the key of the last job
-- picked: each claim started the shares over, so a key of weight 3 offered
-- jobs at 1/3 and 2/3, below a weight-1 key's first at 1, claim after claim.
-- With claims of 2 and weights 3 and 1, all 20 claimed jobs of ten claims went
-- to the heavy key; the light one waited for the heavy one's whole backlog
-- (test/fair-turns.test.ts). Its documented bound held only for claims of at
-- least a turn of the keys.
--
-- Now the turn is carried from claim to claim: the walk is a weighted round
-- robin whose position is stored, the cursor key and how much of its turn is
-- used.
--
--   key_turn_used   jobs of key_cursor's current turn claimed so far. Below
--                   the key's weight: the next claim's walk starts AT the
--                   cursor key and offers the rest of its turn first. NULL
--                   or at its weight: the turn is over, the walk starts after
--                   it. Written with key_cursor, under the queue's lock.
ALTER TABLE stampede.queue_settings
  ADD COLUMN key_turn_used integer CHECK (key_turn_used >= 0);

-- The walk is 0016's (after the cursor, or at it when its turn goes on; the
-- next key with claimable jobs, wrapping around once; at most `wanted` keys,
-- one probe of jobs_key_due_idx each). Each visited key offers its best jobs
-- (priority, then due time) up to its room under `per_key`. Its i-th job sits
-- at position pos = i (the cursor key resuming its turn: used + i) and falls
-- in the turn (pos - 1) / weight of this walk (0: the current one). The pick
-- takes whole turns in walk order: turn first, then walk order, then the
-- key's own order; so a key gets `weight` jobs a turn and every key visited
-- gets its turn before any gets a second, whatever the claim's size.
--
-- Why turns and not shares: 0016 interleaved a turn by share (i / weight, ties
-- in walk order). A claim that ends inside a turn then leaves a position that
-- a key and a count cannot say (which keys had their jobs below share s), and
-- a walk that started the shares over let the heavy keys' low shares go ahead
-- of the light keys' again. Carrying a share position would mean storing it
-- and walking every key of the turn to find who is owed what: no longer at
-- most `wanted` keys a claim. Taking turns whole keeps the walk as it was
-- and the stored state to two columns. A claim of at least a turn of the
-- keys picks the same jobs as before wherever it ends on a turn's boundary;
-- inside a turn it picks the walk's first keys whole instead of everyone's
-- first jobs.
--
-- The cursor after the claim: the key of the last job picked (turn, walk
-- order) and its used count ((pos - 1) mod weight + 1). A claim that found
-- fewer jobs than it wanted has given every key it visited all it could:
-- the cursor goes to the last key visited, turn over. So keys held at their
-- cap do not hold the walk (0016 left the cursor where it was when they
-- offered nothing: a claim smaller than the capped keys ahead of another key
-- never reached it).
--
-- The bound (docs/operating.md, "Tenants"): while key k has a job due and
-- room under its cap, the queue's claims pick at most W - w_k jobs of other
-- keys before one of k's (W: the sum of the weights of the keys with jobs
-- due; each other key at most one turn, the cursor key's rest of a turn
-- counting as its turn), so k is picked within ceil((W - w_k + 1) / s)
-- claims of s jobs each. Over a run of claims in which the same keys stay
-- backlogged, each key's starts are within w_k of w_k / W of all starts.
CREATE OR REPLACE FUNCTION stampede.fair_pick(q text, per_key int, wanted int, cursor text, sequential boolean)
RETURNS SETOF bigint
LANGUAGE plpgsql VOLATILE ROWS 16 AS $$
DECLARE
  resume  boolean;
  used    int;
  ids     bigint[];
  last    text;
  last_at int;
  visited text;
BEGIN
  SELECT s.key_turn_used INTO used FROM stampede.queue_settings s WHERE s.queue = q;
  resume := cursor IS NOT NULL AND used IS NOT NULL
        AND used < coalesce((SELECT kw.weight FROM stampede.key_weights kw WHERE kw.queue = q AND kw.key = cursor), 1)
        AND EXISTS (SELECT 1 FROM stampede.jobs j
                     WHERE j.queue = q AND j.fairness_key = cursor
                       AND j.state IN ('pending', 'failed') AND j.crash_count = 0 AND j.run_at <= now());
  WITH RECURSIVE walk(key, n, first, wrapped) AS (
    SELECT s.key, 1, s.key, false
      FROM (SELECT CASE WHEN resume THEN cursor ELSE
                     coalesce((SELECT min(j.fairness_key) FROM stampede.jobs j
                                WHERE j.queue = q AND j.fairness_key > cursor
                                  AND j.state IN ('pending', 'failed') AND j.crash_count = 0 AND j.run_at <= now()),
                              (SELECT min(j.fairness_key) FROM stampede.jobs j
                                WHERE j.queue = q AND j.fairness_key IS NOT NULL
                                  AND j.state IN ('pending', 'failed') AND j.crash_count = 0 AND j.run_at <= now())) END AS key) s
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
  ), visits AS (
    SELECT w.key, w.n FROM walk w WHERE w.key IS NOT NULL AND NOT (w.wrapped AND w.key >= w.first)
  ), offered AS (
    SELECT k.id, v.key, v.n, s.weight, k.r + CASE WHEN resume AND v.n = 1 THEN used ELSE 0 END AS pos
      FROM visits v
     CROSS JOIN LATERAL (
            SELECT coalesce((SELECT kw.weight FROM stampede.key_weights kw WHERE kw.queue = q AND kw.key = v.key), 1) AS weight,
                   (SELECT count(*) FROM stampede.jobs j WHERE j.state = 'claimed' AND j.queue = q AND j.fairness_key = v.key) AS busy
          ) s
     CROSS JOIN LATERAL (
            SELECT t.id, (row_number() OVER ())::int AS r
              FROM (SELECT j.id
                      FROM stampede.jobs j
                     WHERE j.queue = q AND j.fairness_key = v.key
                       AND j.state IN ('pending', 'failed') AND j.crash_count = 0 AND j.run_at <= now()
                       AND (NOT sequential OR j.id = stampede.key_head(q, v.key))
                     ORDER BY j.priority DESC, j.run_at, j.id
                     LIMIT greatest(least(per_key - s.busy, wanted), 0)) t
          ) k
  ), picked AS (
    SELECT o.id, o.key, o.n, o.pos, o.weight, (o.pos - 1) / o.weight AS turn
      FROM offered o ORDER BY turn, o.n, o.pos LIMIT wanted
  )
  SELECT array_agg(p.id ORDER BY p.turn, p.n, p.pos),
         (array_agg(p.key ORDER BY p.turn DESC, p.n DESC, p.pos DESC))[1],
         (array_agg((p.pos - 1) % p.weight + 1 ORDER BY p.turn DESC, p.n DESC, p.pos DESC))[1],
         (SELECT v.key FROM visits v ORDER BY v.n DESC LIMIT 1)
    INTO ids, last, last_at, visited
    FROM picked p;
  IF coalesce(cardinality(ids), 0) >= wanted THEN
    UPDATE stampede.queue_settings s SET key_cursor = last, key_turn_used = last_at WHERE s.queue = q;
  ELSIF visited IS NOT NULL THEN
    UPDATE stampede.queue_settings s SET key_cursor = visited, key_turn_used = NULL WHERE s.queue = q;
  END IF;
  RETURN QUERY SELECT unnest(ids);
END $$;
