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
    const params = [['q0', 'q1'], 10, 'explain', [30000, 30000], 5000];
    const custom = await db.query(`EXPLAIN (FORMAT JSON) ${workerQueries.ClaimJobs}`, params);
    expectIndexesOnly(custom.rows[0]['QUERY PLAN'][0].Plan);
    // The worker runs the claim as a prepared statement (engine/db.ts prepared): Postgres may then settle on the
    // generic plan, made without the parameters' values. It must ride the indexes too.
    const c = await db.pool.connect();
    try {
      await c.query('SET plan_cache_mode = force_generic_plan');
      await c.query(`PREPARE claim_generic AS ${workerQueries.ClaimJobs}`);
      const generic = await c.query(`EXPLAIN (FORMAT JSON) EXECUTE claim_generic('{q0,q1}', 10, 'explain', '{30000,30000}', 5000)`);
      expectIndexesOnly(generic.rows[0]['QUERY PLAN'][0].Plan);
    } finally {
      await c.query('DEALLOCATE ALL; RESET plan_cache_mode').catch(() => {});
      c.release();
    }
  });
});

function expectIndexesOnly(plan: any): void {
  const onJobs = nodes(plan).filter((n) => n['Relation Name'] === 'jobs');
  expect(onJobs.some((n) => n['Index Name'] === 'jobs_due_idx')).toBe(true);
  expect(onJobs.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
}
