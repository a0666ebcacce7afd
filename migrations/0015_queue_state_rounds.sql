-- The latest queue-state round, one row, written by the one sampler that
-- holds the sampling lock (engine/metrics/sampler-election.ts) and read by
-- every other sampler and by the dashboard's queues page. Workers started
-- with --sample-queue-state elect one sampler between them, so N of them cost
-- one round per interval, not N; the rest serve this row's figures.
--
-- `round` is the snapshot as the leader built it (QueueStateSnapshot, JSON);
-- `sampled_at` is the database clock when it was written, so a reader judges
-- its freshness on the same clock whatever the nodes' clocks say. `round_no`
-- counts the rounds written since the table was created: what a test reads to
-- see one round per interval. One row, updated in place: a HOT update of a
-- one-page table, whose dead versions the page prunes on its own.
CREATE TABLE stampede.queue_state_rounds (
  id         boolean PRIMARY KEY DEFAULT true CHECK (id),
  round_no   bigint NOT NULL,
  sampled_at timestamptz NOT NULL,
  leader     text NOT NULL,
  round      jsonb NOT NULL
);
