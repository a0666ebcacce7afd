import { describe, expect, it } from 'vitest';
import { systemClock } from '../engine/clock.ts';
import { pauseQueue, setQueueLimits } from '../engine/control/index.ts';
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
