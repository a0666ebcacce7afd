import { describe, expect, it } from 'vitest';
import { freshDatabase } from './support/db.ts';
import { claimJobs } from '../engine/worker/claim.ts';
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

// A worker's pool has many connections and Postgres plans a prepared statement's first five executions on each
// connection with its values, and then keeps one generic plan while the table changes under it: a short drain runs
// mostly on the first kind, a worker started on a fresh table on a plan made when the table was small. Each must ride
// the same indexes. The completion's negative controls: naming `state = 'claimed'` (the claimed-rows index, compared
// with every id), or the plain lists (a Seq Scan of a table small when the plan was made, or of 40,000 rows for 1,000 ids).
describe('a 1,000-job claim and its completion, planned with their values or without', () => {
  it('ride the indexes, whatever the table held when they were planned and whatever its statistics say', async () => {
    const small = await freshDatabase();
    const c = await small.db.pool.connect();
    const readsOfJobs = (plan: any) =>
      nodes(plan)
        .filter((n) => n['Relation Name'] === 'jobs' && n['Node Type'] !== 'ModifyTable')
        .map((n) => `${n['Node Type']} ${n['Index Name'] ?? ''}`.trim())
        .sort();
    const explainCompletion = async (name: string, ids: string, tokens: string) =>
      readsOfJobs((await c.query(`EXPLAIN (FORMAT JSON) EXECUTE ${name}(${c.escapeLiteral(ids)}, ${c.escapeLiteral(tokens)})`)).rows[0]['QUERY PLAN'][0].Plan);
    try {
      // A generic plan made while the table held 300 rows, then kept while it grows to 20,000 (no ANALYZE between).
      await c.query(`INSERT INTO stampede.jobs (queue, payload) SELECT 'plan', '{}' FROM generate_series(1, 300)`);
      await c.query('ANALYZE stampede.jobs');
      await c.query('SET plan_cache_mode = force_generic_plan');
      await c.query(`PREPARE complete_early AS ${workerQueries.CompleteJobs}`);
      const none = '00000000-0000-0000-0000-000000000000';
      expect(await explainCompletion('complete_early', '1,2', `${none},${none}`), 'completion planned on 300 rows').toEqual(['Index Scan jobs_pkey']);
      await c.query(`INSERT INTO stampede.jobs (queue, payload) SELECT 'plan', '{}' FROM generate_series(1, 19700)`);
      expect(await explainCompletion('complete_early', '1,2', `${none},${none}`), 'the same plan on 20,000 rows').toEqual(['Index Scan jobs_pkey']);
      await c.query('DEALLOCATE complete_early; RESET plan_cache_mode');

      // The claim on statistics of this moment (20,000 due jobs, analyzed at that size), and on those of an earlier
      // moment after a burst (40,000). Its negative control: `locked` joined to `candidates` on id, which with the
      // values hashed the candidates against a Seq Scan of the 20,000 rows.
      const expectClaimOnIndexes = async (what: string) => {
        for (const mode of ['force_custom_plan', 'force_generic_plan']) {
          await c.query(`SET plan_cache_mode = ${mode}`);
          await c.query(`PREPARE claim_plan AS ${workerQueries.ClaimJobs}`);
          const plan = (await c.query(`EXPLAIN (FORMAT JSON) EXECUTE claim_plan('{plan}', 1000, 'plan', '{60000}', 5000)`)).rows[0]['QUERY PLAN'][0].Plan;
          expect(readsOfJobs(plan), `claim of 1,000, ${what}, ${mode}`).toEqual(['Index Scan jobs_due_idx', 'Index Scan jobs_pkey', 'Index Scan jobs_pkey']);
          await c.query('DEALLOCATE claim_plan');
        }
        await c.query('RESET plan_cache_mode');
      };
      await c.query('ANALYZE stampede.jobs');
      await expectClaimOnIndexes('20,000 rows analyzed');
      await c.query(`INSERT INTO stampede.jobs (queue, payload) SELECT 'plan', '{}' FROM generate_series(1, 20000)`);
      await expectClaimOnIndexes('40,000 rows, analyzed at 20,000');

      // Statistics taken while nothing is claimed, as after an ANALYZE between bursts.
      await c.query('ANALYZE stampede.jobs');
      const claimed = await claimJobs(c, { queues: ['plan'], leaseMs: [60_000], limit: 1000, workerId: 'plan', agingMs: 5_000 });
      expect(claimed).toHaveLength(1000);
      const ids = claimed.map((j) => j.id).join(',');
      const tokens = claimed.map((j) => j.leaseToken).join(',');
      for (const mode of ['force_custom_plan', 'force_generic_plan']) {
        await c.query(`SET plan_cache_mode = ${mode}`);
        await c.query(`PREPARE complete_plan AS ${workerQueries.CompleteJobs}`);
        expect(await explainCompletion('complete_plan', ids, tokens), `completion of 1,000, ${mode}`).toEqual(['Index Scan jobs_pkey']);
        await c.query('DEALLOCATE complete_plan');
      }
      await c.query('RESET plan_cache_mode');
      // The plans do what they say: every claimed job completes, once.
      expect((await c.query(workerQueries.CompleteJobs, [ids, tokens])).rowCount).toBe(1000);
      expect((await c.query(workerQueries.CompleteJobs, [ids, tokens])).rowCount).toBe(0);
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
