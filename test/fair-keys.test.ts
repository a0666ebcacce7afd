import { describe, expect, it } from 'vitest';
import { getQueueControl, setKeyWeight, setQueueLimits } from '../engine/control/index.ts';
import { enqueue, enqueueMany } from '../engine/enqueue.ts';
import { ValidationError } from '../engine/errors.ts';
import { claimJobs, claimSuspect, type ClaimedJob } from '../engine/worker/claim.ts';
import { workerQueries as q } from '../engine/worker/queries.ts';
import { freshDatabase } from './support/db.ts';
import { downstream, useFleet } from './support/fleet.ts';
import { countByState } from './support/jobs.ts';
import { until } from './support/wait.ts';

// Per-key limits and the fair share (migrations/0016_fair_keys.sql, ClaimJobs in engine/worker/worker.sql).
const { db, url } = await freshDatabase();
const fleet = useFleet(url);
const ops = { by: 'ops', reason: 'share the queue between tenants', allowNew: true };

const claim = (queue: string, limit: number, workerId = 'w') => claimJobs(db, { queues: [queue], leaseMs: [60_000], limit, workerId, agingMs: 5_000 });
const complete = (jobs: ClaimedJob[]) => db.query(q.CompleteJobs, [jobs.map((j) => j.id).join(','), jobs.map((j) => j.leaseToken).join(',')]);
const perKey = (jobs: ClaimedJob[]) => {
  const counts: Record<string, number> = {};
  for (const j of jobs) counts[j.fairnessKey ?? '(none)'] = (counts[j.fairnessKey ?? '(none)'] ?? 0) + 1;
  return counts;
};

/** A noisy tenant's flood enqueued first, then `quiet` tenants with `each` jobs. */
async function flood(queue: string, noisy: number, quiet: string[], each: number): Promise<void> {
  await enqueueMany(db, Array.from({ length: noisy }, (_, i) => ({ queue, payload: { i }, options: { fairnessKey: 'noisy' } })));
  await enqueueMany(db, quiet.flatMap((key) => Array.from({ length: each }, (_, i) => ({ queue, payload: { i }, options: { fairnessKey: key } }))));
}

describe('fairnessKey at enqueue', () => {
  it('is stored and comes back with the claim; a bad one names the option', async () => {
    await enqueue(db, 'store', {}, { fairnessKey: 'tenant-42' });
    expect((await claim('store', 1))[0].fairnessKey).toBe('tenant-42');
    await expect(enqueue(db, 'store', {}, { fairnessKey: '' })).rejects.toThrow(ValidationError);
    await expect(enqueue(db, 'store', {}, { fairnessKey: '' })).rejects.toThrow(/fairnessKey/);
  });

  it('a queue without per-key settings claims keyed jobs in plain due order', async () => {
    await flood('plain', 30, ['a', 'b'], 2);
    expect(perKey(await claim('plain', 10))).toEqual({ noisy: 10 });
  });
});

describe('maxInFlightPerKey', () => {
  it('caps each key in flight across claims, and the claim reaches the quiet keys behind the flood', async () => {
    await setQueueLimits(db, 'capped', { maxInFlight: null, maxStartsPerSecond: null, maxInFlightPerKey: 2 }, ops);
    expect((await getQueueControl(db, 'capped'))?.maxInFlightPerKey).toBe(2);
    await flood('capped', 50, ['q1', 'q2', 'q3'], 5);
    const first = await claim('capped', 20, 'w1');
    expect(perKey(first)).toEqual({ noisy: 2, q1: 2, q2: 2, q3: 2 });
    // A second worker finds every key at its cap.
    expect(await claim('capped', 20, 'w2')).toEqual([]);
    // A key's finished jobs give its slots back.
    await complete(first.filter((j) => j.fairnessKey === 'noisy'));
    expect(perKey(await claim('capped', 20, 'w2'))).toEqual({ noisy: 2 });
  });

  it('leaves the other limits as they were when omitted, and null removes it', async () => {
    await setQueueLimits(db, 'keep', { maxInFlight: null, maxStartsPerSecond: null, maxInFlightPerKey: 3 }, ops);
    await setQueueLimits(db, 'keep', { maxInFlight: 5, maxStartsPerSecond: null }, ops);
    expect((await getQueueControl(db, 'keep'))?.maxInFlightPerKey).toBe(3);
    await setQueueLimits(db, 'keep', { maxInFlight: 5, maxStartsPerSecond: null, maxInFlightPerKey: null }, ops);
    expect((await getQueueControl(db, 'keep'))?.maxInFlightPerKey).toBe(null);
    await expect(setQueueLimits(db, 'keep', { maxInFlight: null, maxStartsPerSecond: null, maxInFlightPerKey: 0 }, ops)).rejects.toThrow(/maxInFlightPerKey/);
  });
});

describe('the fair share', () => {
  it('gives each key with jobs due one job per turn, however many the noisy one enqueued first', async () => {
    await setQueueLimits(db, 'fair', { maxInFlight: null, maxStartsPerSecond: null, maxInFlightPerKey: 1000 }, ops);
    await flood('fair', 200, ['q1', 'q2', 'q3'], 3);
    expect(perKey(await claim('fair', 4))).toEqual({ noisy: 1, q1: 1, q2: 1, q3: 1 });
    // A claim of many takes many turns: the quiet keys run out (3 each), the noisy one takes the rest.
    expect(perKey(await claim('fair', 12))).toEqual({ noisy: 6, q1: 2, q2: 2, q3: 2 });
  });

  it('by weight: a key of weight 3 is offered three jobs a turn', async () => {
    await setQueueLimits(db, 'weighted', { maxInFlight: null, maxStartsPerSecond: null, maxInFlightPerKey: 1000 }, ops);
    await setKeyWeight(db, 'weighted', 'noisy', 3, ops);
    await flood('weighted', 100, ['q1', 'q2'], 10);
    expect(perKey(await claim('weighted', 5))).toEqual({ noisy: 3, q1: 1, q2: 1 });
    await setKeyWeight(db, 'weighted', 'noisy', null, ops);
    expect(perKey(await claim('weighted', 3))).toEqual({ noisy: 1, q1: 1, q2: 1 });
    await expect(setKeyWeight(db, 'weighted', 'noisy', 0, ops)).rejects.toThrow(/weight/);
  });

  it('takes the keys in turn: a claim smaller than the number of keys resumes where the last one stopped', async () => {
    await setQueueLimits(db, 'turns', { maxInFlight: null, maxStartsPerSecond: null, maxInFlightPerKey: 1000 }, ops);
    const keys = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6'];
    await flood('turns', 0, keys, 4);
    const seen: string[] = [];
    for (let i = 0; i < 7; i++) {
      const jobs = await claim('turns', 2);
      seen.push(...jobs.map((j) => j.fairnessKey!).sort());
      await complete(jobs);
    }
    // Two keys a claim, in key order, wrapping around: every key twice in 14 starts.
    expect(seen).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k0', 'k6', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6']);
    expect((await db.query(`SELECT key_cursor FROM stampede.queue_settings WHERE queue = 'turns'`)).rows[0].key_cursor).toBe('k6');
  });

  it('unkeyed jobs of a fair queue keep their due-order place beside the keys', async () => {
    await setQueueLimits(db, 'mixed', { maxInFlight: null, maxStartsPerSecond: null, maxInFlightPerKey: 1 }, ops);
    await enqueueMany(db, Array.from({ length: 3 }, (_, i) => ({ queue: 'mixed', payload: { i } })));
    await flood('mixed', 10, ['q1'], 2);
    expect(perKey(await claim('mixed', 10))).toEqual({ '(none)': 3, noisy: 1, q1: 1 });
  });
});

describe('sequential keys', () => {
  const seq = (queue: string) => setQueueLimits(db, queue, { maxInFlight: null, maxStartsPerSecond: null, sequential: true }, ops);

  it('runs each key one at a time in enqueue order, whatever the priorities', async () => {
    await seq('seq');
    expect((await getQueueControl(db, 'seq'))?.sequential).toBe(true);
    await enqueueMany(db, [
      { queue: 'seq', payload: { n: 1 }, options: { fairnessKey: 'acct-1' } },
      { queue: 'seq', payload: { n: 2 }, options: { fairnessKey: 'acct-1', priority: 9 } },
      { queue: 'seq', payload: { n: 1 }, options: { fairnessKey: 'acct-2' } },
    ]);
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      const jobs = await claim('seq', 10);
      order.push(...jobs.map((j) => `${j.fairnessKey}:${(j.payload as { n: number }).n}`).sort());
      await complete(jobs);
    }
    // acct-1's second job waits for its first, though it has the higher priority.
    expect(order).toEqual(['acct-1:1', 'acct-2:1', 'acct-1:2']);
  });

  it("a failed head holds its key through its backoff; a crashed head reruns (as a suspect) before the key's next job", async () => {
    await seq('seq-crash');
    await enqueueMany(db, [1, 2].map((n) => ({ queue: 'seq-crash', payload: { n }, options: { fairnessKey: 'acct' } })));
    const [head] = await claim('seq-crash', 10, 'doomed');
    expect((head.payload as { n: number }).n).toBe(1);
    // Its worker dies: the lease is taken back as a crash (what the rescuer does to a dead holder's lease).
    await db.query(
      `UPDATE stampede.jobs SET state = 'pending', crash_count = crash_count + 1, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL WHERE id = $1`,
      [head.id],
    );
    expect(await claim('seq-crash', 10)).toEqual([]);
    const suspect = await claimSuspect(db, { queues: ['seq-crash'], leaseMs: [60_000], workerId: 'w' });
    expect(suspect?.id).toBe(head.id);
    // Failed, in its backoff: still the head, still holding the key.
    await db.query(q.FailJob, [head.id, suspect!.leaseToken, 'boom', 60_000, 'error']);
    expect(await claim('seq-crash', 10)).toEqual([]);
    // Done (here: retried now, as the suspect it still is, and completed): the next job of the key may start.
    await db.query(`UPDATE stampede.jobs SET run_at = now() WHERE id = $1`, [head.id]);
    expect(await claim('seq-crash', 10)).toEqual([]);
    const again = await claimSuspect(db, { queues: ['seq-crash'], leaseMs: [60_000], workerId: 'w' });
    expect(again?.id).toBe(head.id);
    await complete([again!]);
    expect((await claim('seq-crash', 10)).map((j) => (j.payload as { n: number }).n)).toEqual([2]);
  });
});

describe('under a fleet of workers', () => {
  it('the per-key cap holds across 4 workers of 10 slots, and every key drains', async () => {
    await setQueueLimits(db, 'fleet-cap', { maxInFlight: null, maxStartsPerSecond: null, maxInFlightPerKey: 3 }, ops);
    await flood('fleet-cap', 60, ['q1', 'q2'], 10);
    const d = downstream(20);
    fleet(4, { handlers: { 'fleet-cap': d.handler }, concurrency: 10 });
    await until('fleet-cap drained', async () => (await countByState(db, 'fleet-cap')).done === 80, 60_000);
    expect(d.state.maxByKey.get('noisy')).toBe(3); // reached, never passed
    expect(Math.max(...d.state.maxByKey.values())).toBeLessThanOrEqual(3);
  });

  it("a sequential queue runs each key's jobs one at a time, in enqueue order, across 4 workers", async () => {
    await setQueueLimits(db, 'fleet-seq', { maxInFlight: null, maxStartsPerSecond: null, sequential: true }, ops);
    const keys = ['a', 'b', 'c'];
    await enqueueMany(db, Array.from({ length: 30 }, (_, i) => ({ queue: 'fleet-seq', payload: { n: Math.floor(i / 3) }, options: { fairnessKey: keys[i % 3] } })));
    const d = downstream(5);
    const seen = new Map<string, number[]>();
    fleet(4, {
      handlers: {
        'fleet-seq': async (payload: unknown, ctx) => {
          seen.set(ctx.job.fairnessKey!, [...(seen.get(ctx.job.fairnessKey!) ?? []), (payload as { n: number }).n]);
          await d.handler(payload, ctx);
        },
      },
      concurrency: 10,
    });
    await until('fleet-seq drained', async () => (await countByState(db, 'fleet-seq')).done === 30, 60_000);
    for (const key of keys) expect(seen.get(key)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(Math.max(...d.state.maxByKey.values())).toBe(1);
    // The keys ran side by side: sequences are per key, not per queue.
    expect(d.state.max).toBeGreaterThan(1);
  });
});
