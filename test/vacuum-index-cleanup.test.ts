// migrations/0014_vacuum_index_cleanup.sql: on a table whose dead row
// versions sit in few of its pages (a long tail of finished jobs), a VACUUM
// left to decide (`auto`) skips the index cleanup, and the due index keeps an
// entry for every row version a claim replaced, at the head of the lane every
// claim reads first. With the table's `vacuum_index_cleanup = on`, the same
// VACUUM cleans them. The control follows, with the option reset, to show the
// skip happens on this table at all.
import { expect, it } from 'vitest';
import { claimJobs } from '../engine/worker/claim.ts';
import { freshDatabase } from './support/db.ts';

const { db } = await freshDatabase();

const FINISHED = 400_000;
const DUE = 10_000;
const CLAIMED = 8_000;

/** Buffers read by the claim's first lane probe (ClaimJobs' per-lane step, by jobs_due_idx), from EXPLAIN. */
async function laneProbeBuffers(): Promise<number> {
  const c = await db.pool.connect();
  try {
    await c.query('SET enable_seqscan = off');
    const plan = (
      await c.query(
        `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, FORMAT JSON)
         SELECT j.id FROM stampede.jobs j
          WHERE j.queue = 'q' AND j.priority = 0 AND j.state IN ('pending', 'failed') AND j.run_at <= now() AND j.crash_count = 0
          ORDER BY j.run_at, j.id LIMIT 20`,
      )
    ).rows[0]['QUERY PLAN'][0].Plan;
    const scan = plan.Plans[0];
    expect(scan['Index Name']).toBe('jobs_due_idx');
    expect(scan['Actual Rows']).toBe(20);
    return scan['Shared Hit Blocks'] + scan['Shared Read Blocks'];
  } finally {
    await c.query('RESET enable_seqscan');
    c.release();
  }
}

async function claimAll(n: number): Promise<void> {
  for (let left = n; left > 0; left -= 1_000) {
    const jobs = await claimJobs(db, { queues: ['q'], leaseMs: [60_000], limit: Math.min(1_000, left), workerId: 'w', agingMs: 5_000 });
    expect(jobs).toHaveLength(Math.min(1_000, left));
  }
}

it('vacuum cleans the due index of claimed rows even when the finished rows make their pages a small share', { timeout: 120_000 }, async () => {
  const options = (await db.query(`SELECT reloptions FROM pg_class WHERE oid = 'stampede.jobs'::regclass`)).rows[0].reloptions as string[];
  expect(options).toContain('vacuum_index_cleanup=on');

  await db.query(
    `INSERT INTO stampede.jobs (queue, state, attempts, finished_at)
     SELECT 'hist', 'done', 1, now() FROM generate_series(1, $1::int)`,
    [FINISHED],
  );
  await db.query(`INSERT INTO stampede.jobs (queue, payload) SELECT 'q', jsonb_build_object('i', g) FROM generate_series(1, $1::int) g`, [DUE]);
  await db.query('VACUUM (ANALYZE) stampede.jobs');
  const clean = await laneProbeBuffers();

  // As migrated: a VACUUM after 4,000 claims cleans their entries out of the lane's head.
  await claimAll(CLAIMED / 2);
  await db.query('VACUUM stampede.jobs');
  const cleaned = await laneProbeBuffers();
  expect(cleaned).toBeLessThanOrEqual(clean + 2);

  // The control: left to decide, the same VACUUM after as many claims again skips the index cleanup here.
  await db.query('ALTER TABLE stampede.jobs RESET (vacuum_index_cleanup)');
  await claimAll(CLAIMED / 2);
  await db.query('VACUUM stampede.jobs');
  const skipped = await laneProbeBuffers();
  expect(skipped).toBeGreaterThan(clean + 10);
});
