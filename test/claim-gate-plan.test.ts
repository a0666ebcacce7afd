import { describe, expect, it } from 'vitest';
import { workerQueries } from '../engine/worker/queries.ts';
import { freshDatabase } from './support/db.ts';

const { db } = await freshDatabase();

/** Every plan node, depth first. */
function nodes(plan: any): any[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/** The claim's plan, as claimJobs sends it (16 slots, one queue). */
async function claimPlan(queue: string): Promise<any[]> {
  const res = await db.query(`EXPLAIN (FORMAT JSON) ${workerQueries.ClaimJobs}`, [[queue], 16, 'explain', [30_000], 5_000]);
  return nodes(res.rows[0]['QUERY PLAN'][0].Plan);
}

// The claim gate (stampede.claim_gate, migrations/0010_control.sql) once made the planner hash-join the
// candidates against a Seq Scan of jobs on a small analyzed table: 8 claimers drained 4x slower. (The
// 200k-row case of claim-plan.test.ts planned well throughout.)
describe('the claim with its gate stays on the indexes on a small table', () => {
  it('4,000 due jobs, before and after ANALYZE: the due index is probed, jobs is never scanned whole', async () => {
    await db.query(`INSERT INTO stampede.jobs (queue) SELECT 'small' FROM generate_series(1, 4000)`);
    for (const analyzed of [false, true]) {
      if (analyzed) await db.query('ANALYZE stampede.jobs');
      const onJobs = (await claimPlan('small')).filter((n) => n['Relation Name'] === 'jobs');
      expect(onJobs.some((n) => n['Index Name'] === 'jobs_due_idx'), `analyzed: ${analyzed}`).toBe(true);
      expect(onJobs.filter((n) => n['Node Type'] === 'Seq Scan'), `analyzed: ${analyzed}`).toEqual([]);
    }
  });
});
