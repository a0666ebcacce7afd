import { describe, expect, it } from 'vitest';
import { freshDatabase } from './support/db.ts';
import { workerQueries } from '../engine/worker/queries.ts';

const { db } = await freshDatabase();

/** Every plan node, depth first. */
function nodes(plan: any): any[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

describe('the due-job scan rides the partial index', () => {
  it('with 200,000 finished rows and 3,000 pending, the claim uses jobs_due_idx and never scans the jobs table', async () => {
    await db.query(`
      INSERT INTO stampede.jobs (queue, priority, state, run_at, finished_at, attempts)
      SELECT 'q' || (g % 4), g % 10, 'done', now() - interval '1 day', now(), 1 FROM generate_series(1, 200000) g`);
    await db.query(`
      INSERT INTO stampede.jobs (queue, priority, run_at)
      SELECT 'q' || (g % 4), g % 10, now() - (g || ' ms')::interval FROM generate_series(1, 3000) g`);
    await db.query('ANALYZE stampede.jobs');
    const explain = await db.query(`EXPLAIN (FORMAT JSON) ${workerQueries.ClaimJobs}`, [
      ['q0', 'q1'],
      10,
      'explain',
      [30000, 30000],
      5000,
      0,
    ]);
    const all = nodes(explain.rows[0]['QUERY PLAN'][0].Plan);
    const onJobs = all.filter((n) => n['Relation Name'] === 'jobs');
    expect(onJobs.some((n) => n['Index Name'] === 'jobs_due_idx')).toBe(true);
    expect(onJobs.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
  });
});
