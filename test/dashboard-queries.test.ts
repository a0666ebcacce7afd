import { beforeAll, describe, expect, it } from 'vitest';
import { setQueueLimits } from '../engine/control/index.ts';
import { cronOrigin, dashboardQueries, getJob, largestKeys, planSearch, searchJobs, SEARCH_STATES, type JobSearch } from '../engine/dashboard/queries.ts';
import { enqueueMany } from '../engine/enqueue.ts';
import { claimJobs } from '../engine/worker/claim.ts';
import { ValidationError } from '../engine/errors.ts';
import { freshDatabase } from './support/db.ts';

const { db } = await freshDatabase();

/** Every plan node, depth first. */
function planNodes(plan: any): any[] {
  return [plan, ...(plan.Plans ?? []).flatMap(planNodes)];
}

async function plan(text: string, params: unknown[]): Promise<any[]> {
  const res = await db.query(`EXPLAIN (FORMAT JSON) ${text}`, params);
  return planNodes(res.rows[0]['QUERY PLAN'][0].Plan);
}

/** Relations that hold rows: a Seq Scan of an empty day partition (tomorrow's, made ahead) reads nothing, and the planner rightly picks it. */
async function nonEmpty(): Promise<Set<string>> {
  const rows = (await db.query(`SELECT relname FROM pg_class WHERE relnamespace = 'stampede'::regnamespace AND relkind = 'r' AND reltuples > 0`)).rows;
  return new Set(rows.map((r) => r.relname));
}

/** Seq Scans on the hot table or on a day partition of the history that holds rows: what must never happen at 300M rows. */
async function scansOfHistory(text: string, params: unknown[]): Promise<string[]> {
  const full = await nonEmpty();
  return (await plan(text, params))
    .filter((n) => n['Node Type'] === 'Seq Scan' && /^(jobs|job_history.*)$/.test(n['Relation Name']) && full.has(n['Relation Name']))
    .map((n) => `Seq Scan on ${n['Relation Name']}`);
}

let doneId = 0;
let archivedId = 0;

beforeAll(async () => {
  // 200k done rows in the hot table and 140k archived over a week of day partitions: the bulk no page may read.
  await db.query(`INSERT INTO stampede.jobs (queue, state, finished_at, run_at)
                  SELECT 'q' || (g % 7), 'done', now() - (g || ' ms')::interval, now() - interval '1 day' FROM generate_series(1, 200000) g`);
  await db.query(`SELECT stampede.create_job_history_partitions(1, (now() - interval '7 days')::date)`);
  await db.query(`INSERT INTO stampede.job_history (id, queue, priority, state, run_at, attempts, max_attempts, crash_count, payload,
                                                    idempotency_key, last_error, errors, created_at, updated_at, finished_at)
                  SELECT 10000000 + g, 'q' || (g % 7), 0, 'done', now() - interval '8 days', 1, 6, 0, jsonb_build_object('n', g),
                         'hist-' || g, NULL, '[]', now() - interval '8 days', now(), now() - ((g % 7) || ' days')::interval - ((g % 1000) || ' s')::interval
                    FROM generate_series(1, 140000) g`);
  await db.query(`INSERT INTO stampede.jobs (queue, priority, run_at, idempotency_key) SELECT 'mail', g % 10, now() - interval '30 s', 'mail-' || g FROM generate_series(1, 2000) g`);
  await db.query(`INSERT INTO stampede.jobs (queue, state, attempts, run_at, errors, last_error)
                  SELECT 'sms', 'failed', 1, now() + interval '1 min', '[{"attempt":1,"kind":"error","error":"boom"}]', 'boom' FROM generate_series(1, 500)`);
  await db.query(`INSERT INTO stampede.jobs (queue, state, attempts, lease_owner, lease_token, lease_expires_at)
                  SELECT 'mail', 'claimed', 1, 'w1', gen_random_uuid(), now() + interval '30 s' FROM generate_series(1, 5)`);
  await db.query(`WITH d AS (INSERT INTO stampede.jobs (queue, state, attempts) SELECT 'sms', 'dead', 6 FROM generate_series(1, 7) RETURNING id, queue, payload, attempts, errors)
                  INSERT INTO stampede.dead_letters (job_id, queue, payload, attempts, code, reason, errors) SELECT id, queue, payload, attempts, 'attempts_exhausted', 'attempts exhausted: boom', errors FROM d`);
  await db.query(`INSERT INTO stampede.jobs (queue, state, finished_at, payload, idempotency_key)
                  VALUES ('rare', 'done', now(), '{"cron":{"scheduleId":"nightly","occurrence":"2026-12-01T02:00:00.000Z"}}', 'cron:nightly:2026-12-01T02:00:00.000Z')`);
  doneId = (await db.query(`SELECT id FROM stampede.jobs WHERE queue = 'rare'`)).rows[0].id;
  archivedId = 10_000_123;
  // 50k operator actions (a few bulk redrives' worth): the audit list must not read them all.
  await db.query(`INSERT INTO stampede.control_audit (actor, reason, verb, queue, job_id, at)
                  SELECT 'ana', 'bulk', 'redrive', 'q' || (g % 7), g, now() - ((50000 - g) || ' ms')::interval FROM generate_series(1, 50000) g`);
  await db.query('ANALYZE stampede.control_audit');
  await db.query('ANALYZE stampede.jobs');
  await db.query('ANALYZE stampede.job_history');
  await db.query('ANALYZE stampede.dead_letters');
});

/** Every search an operator can type: each state alone and all of them, with and without a queue, by id and by key. */
function everySearch(): JobSearch[] {
  const searches: JobSearch[] = [{ id: 42 }, { id: 10_000_123 }, { idempotencyKey: 'mail-7' }];
  for (const queue of [undefined, 'mail', 'q3']) {
    searches.push({ queue });
    for (const state of SEARCH_STATES) searches.push({ queue, state });
  }
  return searches;
}

describe('dashboard queries stay off the done rows and the history (200k done, 140k archived over 7 day partitions)', () => {
  it('no search plan does a Seq Scan on stampede.jobs or a job_history partition', async () => {
    const seen = new Set<string>();
    for (const search of everySearch()) {
      for (const p of planSearch(search)) {
        seen.add(p.name);
        expect({ search, query: p.name, seqScans: await scansOfHistory(p.text, p.params) }).toEqual({ search, query: p.name, seqScans: [] });
      }
    }
    expect([...seen].sort()).toEqual(['JobById', 'JobByIdempotencyKey', 'SearchArchived', 'SearchCancelled', 'SearchClaimable', 'SearchClaimed', 'SearchDead', 'SearchRecentDone']);
  });

  it('the newest operator actions read the audit backwards on its primary key, not all 50k rows', async () => {
    const nodes = await plan(dashboardQueries.RecentAudit, [100]);
    expect(nodes.filter((n) => n['Relation Name'] === 'control_audit').map((n) => `${n['Node Type']} using ${n['Index Name']}`)).toEqual(['Index Scan using control_audit_pkey']);
  });

  it('the remaining queries read only small tables or primary keys', async () => {
    for (const [name, params] of [['DeadLetterOfJob', [5]], ['DeadLetterReasons', [50]]] as const) {
      expect({ name, seqScans: await scansOfHistory(dashboardQueries[name], [...params]) }).toEqual({ name, seqScans: [] });
    }
  });

  it('a done search reads at most its scan cap of the newest completions, off jobs_done_finished_idx', async () => {
    const [p] = planSearch({ queue: 'rare', state: 'done', recentDoneScanRows: 1000 });
    const nodes = await plan(p.text, p.params);
    expect(nodes.some((n) => n['Relation Name'] === 'jobs' && n['Index Name'] === 'jobs_done_finished_idx')).toBe(true);
    // The inner LIMIT (the cap) sits above the index scan: the scan stops there whatever the table holds.
    expect(nodes.filter((n) => n['Node Type'] === 'Limit')).toHaveLength(2);
  });

  it('an archived job is found by id through the partitions\' primary keys', async () => {
    const nodes = await plan(dashboardQueries.JobById, [archivedId]);
    const full = await nonEmpty();
    const onHistory = nodes.filter((n) => /^job_history_p/.test(n['Relation Name'] ?? '') && full.has(n['Relation Name']));
    expect(onHistory.length).toBeGreaterThanOrEqual(7);
    expect(onHistory.map((n) => n['Node Type']).filter((t) => !/Index/.test(t))).toEqual([]);
  });
});

describe('what the searches find', () => {
  it('by state and queue, grouped by state, each bounded by the limit', async () => {
    const mail = await searchJobs(db, { queue: 'mail', limit: 10 });
    expect(mail.filter((j) => j.state === 'pending')).toHaveLength(10);
    expect(mail.filter((j) => j.state === 'claimed').map((j) => j.leaseOwner)).toEqual(['w1', 'w1', 'w1', 'w1', 'w1']);
    expect((await searchJobs(db, { queue: 'sms', state: 'failed', limit: 3 })).map((j) => j.lastError)).toEqual(['boom', 'boom', 'boom']);
    expect(await searchJobs(db, { queue: 'sms', state: 'dead' })).toHaveLength(7);
  });

  it('done: the hot table and, for a queue, the archive', async () => {
    expect((await searchJobs(db, { queue: 'rare', state: 'done' })).map((j) => j.id)).toEqual([doneId]);
    const q3 = await searchJobs(db, { queue: 'q3', state: 'done', limit: 5 });
    expect(q3.filter((j) => j.archived)).toHaveLength(5);
    expect(q3.filter((j) => !j.archived)).toHaveLength(5);
  });

  it('by id (hot or archived) and by key; a cron job names its schedule and occurrence', async () => {
    expect((await getJob(db, archivedId))).toMatchObject({ id: archivedId, archived: true, queue: 'q4' });
    const rare = (await searchJobs(db, { idempotencyKey: 'cron:nightly:2026-12-01T02:00:00.000Z' }))[0];
    expect(rare.id).toBe(doneId);
    expect(cronOrigin(rare)).toEqual({ scheduleId: 'nightly', occurrence: '2026-12-01T02:00:00.000Z' });
    expect(await getJob(db, 999_999_999)).toBeNull();
  });

  it('refuses a bad state or queue with the field named', () => {
    expect(() => planSearch({ state: 'zombie' as never })).toThrow(ValidationError);
    expect(() => planSearch({ state: 'zombie' as never })).toThrow(/state: "zombie" is not a state; expected one of pending, failed, claimed, dead, cancelled, done/);
    expect(() => planSearch({ queue: 'no spaces' })).toThrow(/queue: "no spaces" is not a queue name/);
  });
});

describe('largestKeys: the fair queues\' largest tenants', () => {
  it("lists each fair queue's keys by due backlog, with the oldest wait and what is in flight; plain queues and unkeyed jobs stay out", async () => {
    const ops = { by: 'ops', reason: 'tenants', allowNew: true };
    await setQueueLimits(db, 'fair-dash', { maxInFlight: null, maxStartsPerSecond: null, maxInFlightPerKey: 5 }, ops);
    const keyed = (queue: string, key: string, n: number) => Array.from({ length: n }, () => ({ queue, payload: {}, options: { fairnessKey: key } }));
    await enqueueMany(db, [...keyed('fair-dash', 'big', 30), ...keyed('fair-dash', 'small', 2), { queue: 'fair-dash', payload: {} }, ...keyed('plain-dash', 'big', 50)]);
    await claimJobs(db, { queues: ['fair-dash'], leaseMs: [60_000], limit: 2, workerId: 'w', agingMs: 5_000 });
    const keys = await largestKeys(db, 10);
    expect(keys.map(({ queue, key, due, inFlight }) => ({ queue, key, due, inFlight }))).toEqual([
      { queue: 'fair-dash', key: 'big', due: 29, inFlight: 1 },
      { queue: 'fair-dash', key: 'small', due: 1, inFlight: 1 },
    ]);
    expect(keys[0].oldestWaitMs).toBeGreaterThanOrEqual(0);
    expect((await largestKeys(db, 1)).map((k) => k.key)).toEqual(['big']);
    await expect(largestKeys(db, 0)).rejects.toThrow(ValidationError);
    expect(await scansOfHistory(dashboardQueries.LargestKeys, [10])).toEqual([]);
  });
});
