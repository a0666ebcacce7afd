import { describe, expect, it } from 'vitest';
import { systemClock } from '../engine/clock.ts';
import { pauseQueue, setQueueLimits } from '../engine/control/index.ts';
import { controlQueries } from '../engine/control/queries.ts';
import { enqueueMany } from '../engine/enqueue.ts';
import { createLogger } from '../engine/log.ts';
import { QueueStateSampler } from '../engine/metrics/queue-state-sampler.ts';
import { createMetrics } from '../engine/metrics/registry.ts';
import { claimJobs } from '../engine/worker/claim.ts';
import { freshDatabase } from './support/db.ts';

const { db } = await freshDatabase();
const ops = { by: 'ops', reason: 'test' };

describe('queue-state metrics of paused and limited queues', () => {
  it('a paused queue keeps its depth and oldest age, with paused = 1; a queue at its limit reports its held-back jobs', async () => {
    await enqueueMany(db, Array.from({ length: 4 }, () => ({ queue: 'm-paused', payload: {}, options: { runAt: new Date(systemClock.now() - 30_000) } })));
    await pauseQueue(db, 'm-paused', ops);
    await enqueueMany(db, Array.from({ length: 5 }, () => ({ queue: 'm-limited', payload: {} })));
    await setQueueLimits(db, 'm-limited', { maxInFlight: 2, maxStartsPerSecond: null }, ops);
    expect(await claimJobs(db, { queues: ['m-limited', 'm-paused'], leaseMs: [60_000, 60_000], limit: 10, workerId: 'w', agingMs: 5_000 })).toHaveLength(2);

    const metrics = createMetrics();
    const snap = await new QueueStateSampler(db, systemClock, metrics, {}, createLogger('test', 'silent')).runOnce();
    expect(snap.queues['m-paused']).toMatchObject({ paused: true, pending: 4, due: 4, heldBackByLimit: 0, maxInFlight: null });
    expect(snap.queues['m-paused'].oldestUnclaimedAgeMs).toBeGreaterThan(25_000);
    expect(snap.queues['m-limited']).toMatchObject({ paused: false, claimed: 2, maxInFlight: 2, due: 3, heldBackByLimit: 3 });

    const text = await metrics.text();
    expect(text).toContain('stampede_queue_paused{queue="m-paused"} 1');
    expect(text).toContain('stampede_queue_paused{queue="m-limited"} 0');
    expect(text).toContain('stampede_queue_in_flight_limit{queue="m-limited"} 2');
    expect(text).toContain('stampede_queue_held_back_by_limit{queue="m-limited"} 3');
    expect(text).not.toContain('stampede_queue_in_flight_limit{queue="m-paused"}');
  });
});

describe('index discipline of the control paths, with 100,000 done rows', () => {
  it('the unknown-queue check and the bulk redrive never scan the jobs table; the gate counts claimed rows on jobs_lease_idx', async () => {
    await db.query(`INSERT INTO stampede.jobs (queue, state, attempts, finished_at) SELECT 'ix-done', 'done', 1, now() FROM generate_series(1, 100000)`);
    await db.query('ANALYZE stampede.jobs');
    const seqScans = async (text: string, params: unknown[]) => {
      const plan = (await db.query(`EXPLAIN (FORMAT JSON) ${text}`, params)).rows[0]['QUERY PLAN'][0].Plan;
      const all = (n: any): any[] => [n, ...(n.Plans ?? []).flatMap(all)];
      return all(plan).filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'jobs');
    };
    expect(await seqScans(controlQueries.KnownQueue, ['no-such-queue'])).toEqual([]);
    expect(await seqScans(controlQueries.RedriveMany, ['ix-done', null, 100, 'ops', 'test', null, 'redrive', null])).toEqual([]);
    expect(await seqScans(controlQueries.RedriveMany, [null, null, 1, 'ops', 'test', 42, 'retry', null])).toEqual([]);

    // The gate's count runs inside stampede.claim_gate, out of EXPLAIN's sight: read the index statistics of one backend instead.
    await enqueueMany(db, Array.from({ length: 3 }, () => ({ queue: 'ix-limited', payload: {} })));
    await setQueueLimits(db, 'ix-limited', { maxInFlight: 2, maxStartsPerSecond: null }, ops);
    const client = await db.pool.connect();
    try {
      const stats = async () => {
        await client.query('SELECT pg_stat_force_next_flush()');
        await client.query('SELECT 1'); // the flush happens at the end of a transaction
        const r = await client.query(`
          SELECT (SELECT seq_scan FROM pg_stat_user_tables WHERE relid = 'stampede.jobs'::regclass) AS seq,
                 (SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelid = 'stampede.jobs_lease_idx'::regclass) AS claimed_idx`);
        await client.query('SELECT pg_stat_clear_snapshot()');
        return r.rows[0] as { seq: number; claimed_idx: number };
      };
      const before = await stats();
      expect(await claimJobs(client, { queues: ['ix-limited'], leaseMs: [60_000], limit: 10, workerId: 'w', agingMs: 5_000 })).toHaveLength(2);
      const after = await stats();
      expect(after.claimed_idx).toBeGreaterThan(before.claimed_idx);
      expect(after.seq).toBe(before.seq);
    } finally {
      client.release();
    }
  });
});
