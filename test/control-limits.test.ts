import { describe, expect, it } from 'vitest';
import { setQueueLimits, getQueueControl, UnknownQueueError } from '../engine/control/index.ts';
import { enqueueMany } from '../engine/enqueue.ts';
import { Events } from '../engine/events.ts';
import { claimJobs, claimSuspect } from '../engine/worker/claim.ts';
import { workerQueries as q } from '../engine/worker/queries.ts';
import { freshDatabase } from './support/db.ts';
import { downstream, useFleet } from './support/fleet.ts';
import { countByState } from './support/jobs.ts';
import { until } from './support/wait.ts';

const { db, url } = await freshDatabase({ maxConnections: 20 });
const fleet = useFleet(url);
const ops = { by: 'ops', reason: 'protect the payments API' };

describe('global limits per queue', () => {
  it('max in flight holds across 4 workers of 10 slots each, and the queue drains', async () => {
    await setQueueLimits(db, 'l1', { maxInFlight: 3, maxStartsPerSecond: null }, { ...ops, allowNew: true });
    await enqueueMany(db, Array.from({ length: 60 }, (_, i) => ({ queue: 'l1', payload: { i } })));
    const d = downstream(30);
    fleet(4, { handlers: { l1: d.handler }, concurrency: 10 });
    await until('l1 drained', async () => (await countByState(db, 'l1')).done === 60, 60_000);
    expect(d.state.calls).toBe(60);
    expect(d.state.max).toBeLessThanOrEqual(3);
    // The limit was reached, not merely respected by a slow fleet.
    expect(d.state.max).toBe(3);
  });

  it('the control: without the limit the same fleet runs far more at once', async () => {
    await enqueueMany(db, Array.from({ length: 60 }, (_, i) => ({ queue: 'l1-unlimited', payload: { i } })));
    const d = downstream(30);
    fleet(4, { handlers: { 'l1-unlimited': d.handler }, concurrency: 10 });
    await until('drained', async () => (await countByState(db, 'l1-unlimited')).done === 60, 60_000);
    expect(d.state.max).toBeGreaterThan(3);
  });

  it("a crashed worker's slots come back with its leases", async () => {
    await setQueueLimits(db, 'l2', { maxInFlight: 2, maxStartsPerSecond: null }, { ...ops, allowNew: true });
    await enqueueMany(db, Array.from({ length: 6 }, (_, i) => ({ queue: 'l2', payload: { i } })));
    // A worker that claims and dies: its claims stay, leases of 1 s, nobody heartbeats them.
    const dead = await claimJobs(db, { queues: ['l2'], leaseMs: [1_000], limit: 10, workerId: 'crashed', agingMs: 5_000 });
    expect(dead).toHaveLength(2); // the limit, not the 10 asked for
    expect(await claimJobs(db, { queues: ['l2'], leaseMs: [1_000], limit: 10, workerId: 'other', agingMs: 5_000 })).toEqual([]);
    const events = new Events();
    const rescued = events.waitFor('lease:rescued', (e) => e.jobId === dead[1].id);
    fleet(1, { events, handlers: { l2: () => {} }, concurrency: 10 });
    await rescued;
    await until('l2 drained', async () => (await countByState(db, 'l2')).done === 6, 30_000);
  });

  it('a crash suspect waits for room under the limit too: it is claimed alone, but not beside a full queue', async () => {
    await setQueueLimits(db, 'l-suspect', { maxInFlight: 1, maxStartsPerSecond: null }, { ...ops, allowNew: true });
    const [suspect, other] = await enqueueMany(db, [1, 2].map((n) => ({ queue: 'l-suspect', payload: { n } })));
    // The first crashed its worker once (what the rescuer leaves of a dead holder's lease): due again, as a suspect.
    await db.query(`UPDATE stampede.jobs SET crash_count = 1 WHERE id = $1`, [suspect.id]);
    const [held] = await claimJobs(db, { queues: ['l-suspect'], leaseMs: [60_000], limit: 10, workerId: 'busy', agingMs: 5_000 });
    expect(held.id).toBe(other.id);
    // The queue's one slot is taken: the suspect waits.
    expect(await claimSuspect(db, { queues: ['l-suspect'], leaseMs: [60_000], workerId: 'lone' })).toBeUndefined();
    await db.query(q.CompleteJobs, [String(held.id), held.leaseToken]);
    expect((await claimSuspect(db, { queues: ['l-suspect'], leaseMs: [60_000], workerId: 'lone' }))?.id).toBe(suspect.id);
  });

  it('max starts per second: no window of T seconds starts more than burst + rate x T', async () => {
    const rate = 20;
    await setQueueLimits(db, 'l3', { maxInFlight: null, maxStartsPerSecond: rate }, { ...ops, allowNew: true });
    await enqueueMany(db, Array.from({ length: 60 }, (_, i) => ({ queue: 'l3', payload: { i } })));
    const events = new Events();
    const starts: number[] = [];
    events.on('job:claimed', (e) => e.queue === 'l3' && starts.push(e.dbClaimedAt));
    fleet(3, { events, handlers: { l3: () => {} }, concurrency: 20 });
    await until('l3 drained', async () => (await countByState(db, 'l3')).done === 60, 60_000);
    starts.sort((a, b) => a - b);
    // dbClaimedAt is each claim statement's start; the bucket is drawn later, under the queue's lock, after
    // waiting for the claims ahead. On a loaded machine that wait reached ~100 ms: allow 250 ms of it (5 jobs).
    const slack = rate * 0.25;
    let worst = 0;
    for (let i = 0; i < starts.length; i++) {
      for (let j = i; j < starts.length; j++) {
        const windowS = (starts[j] - starts[i]) / 1000;
        worst = Math.max(worst, j - i + 1 - (rate + rate * windowS));
      }
    }
    expect(worst).toBeLessThanOrEqual(slack);
    // 60 starts at 20/s with a burst of 20: at least 2 s.
    expect(starts.at(-1)! - starts[0]).toBeGreaterThanOrEqual(1_900);
  });

  it('removing a limit takes effect at the next claim; limits refuse bad values and unknown queues', async () => {
    await setQueueLimits(db, 'l4', { maxInFlight: 1, maxStartsPerSecond: null }, { ...ops, allowNew: true });
    await enqueueMany(db, Array.from({ length: 5 }, (_, i) => ({ queue: 'l4', payload: { i } })));
    expect(await claimJobs(db, { queues: ['l4'], leaseMs: [60_000], limit: 5, workerId: 'a', agingMs: 5_000 })).toHaveLength(1);
    expect(await claimJobs(db, { queues: ['l4'], leaseMs: [60_000], limit: 5, workerId: 'a', agingMs: 5_000 })).toHaveLength(0);
    expect(await setQueueLimits(db, 'l4', { maxInFlight: null, maxStartsPerSecond: null }, ops)).toMatchObject({ maxInFlight: null });
    expect(await claimJobs(db, { queues: ['l4'], leaseMs: [60_000], limit: 5, workerId: 'a', agingMs: 5_000 })).toHaveLength(4);
    await expect(setQueueLimits(db, 'l4', { maxInFlight: 0, maxStartsPerSecond: null }, ops)).rejects.toThrow(/^maxInFlight: 0 is not an integer in \[1, 1000000\]/);
    await expect(setQueueLimits(db, 'l4', { maxInFlight: null, maxStartsPerSecond: -1 }, ops)).rejects.toThrow(/^maxStartsPerSecond: -1/);
    await expect(setQueueLimits(db, 'l4-typo', { maxInFlight: 2, maxStartsPerSecond: null }, ops)).rejects.toThrow(UnknownQueueError);
    expect(await getQueueControl(db, 'l4-typo')).toBeNull();
  });
});
