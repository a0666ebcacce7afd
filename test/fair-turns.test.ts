import { describe, expect, it } from 'vitest';
import { setKeyWeight, setQueueLimits } from '../engine/control/index.ts';
import { enqueueMany } from '../engine/enqueue.ts';
import { claimJobs, type ClaimedJob } from '../engine/worker/claim.ts';
import { workerQueries as q } from '../engine/worker/queries.ts';
import { freshDatabase } from './support/db.ts';

// The fair share across claims of any size (migrations/0019_fair_turns.sql): a
// claim smaller than a turn of the keys must go on with the turn where the
// previous claim stopped, not start the turn over (docs/operating.md,
// "Tenants": the bound). Each queue here is fair with a cap that never binds,
// and every key keeps a backlog through the run, so the weights alone decide.
const { db } = await freshDatabase();
const ops = { by: 'ops', reason: 'share the queue between tenants', allowNew: true };

const claim = (queue: string, limit: number, workerId = 'w') => claimJobs(db, { queues: [queue], leaseMs: [60_000], limit, workerId, agingMs: 5_000 });
const complete = (jobs: ClaimedJob[]) => db.query(q.CompleteJobs, [jobs.map((j) => j.id).join(','), jobs.map((j) => j.leaseToken).join(',')]);

let queues = 0;

/** A fair queue whose keys (weight each) all hold `backlog` due jobs; returns its name. */
async function backlogged(weights: Record<string, number>, backlog: number, perKeyCap = 10_000): Promise<string> {
  const queue = `turns-${++queues}`;
  await setQueueLimits(db, queue, { maxInFlight: null, maxStartsPerSecond: null, maxInFlightPerKey: perKeyCap }, ops);
  for (const [key, weight] of Object.entries(weights)) if (weight !== 1) await setKeyWeight(db, queue, key, weight, ops);
  await enqueueMany(db, Object.keys(weights).flatMap((key) => Array.from({ length: backlog }, (_, i) => ({ queue, payload: { i }, options: { fairnessKey: key } }))));
  return queue;
}

/** `claims` claims of `size` jobs each, every claim completed before the next: the keys each took. */
async function drive(queue: string, size: number, claims: number): Promise<string[][]> {
  const taken: string[][] = [];
  for (let i = 0; i < claims; i++) {
    const jobs = await claim(queue, size);
    taken.push(jobs.map((j) => j.fairnessKey!));
    await complete(jobs);
  }
  return taken;
}

/**
 * The documented bound, checked on claims where every key stays backlogged
 * (W: the sum of the weights, s: the claim's size):
 * - a key k appears in at least one of every ceil((W - w_k + 1) / s)
 *   consecutive claims (the other keys take at most one turn each, W - w_k
 *   jobs, before k's next job);
 * - after every claim, each key's starts so far are within one turn (w_k)
 *   of its weighted share of all starts so far (w_k / W of them).
 * Returns the breaches, to be empty.
 */
function breaches(weights: Record<string, number>, size: number, taken: string[][]): string[] {
  const total = Object.values(weights).reduce((a, b) => a + b, 0);
  const out: string[] = [];
  const counts: Record<string, number> = Object.fromEntries(Object.keys(weights).map((k) => [k, 0]));
  let all = 0;
  taken.forEach((keys, i) => {
    for (const k of keys) counts[k]++;
    all += keys.length;
    for (const [k, w] of Object.entries(weights)) {
      const expected = (all * w) / total;
      if (Math.abs(counts[k] - expected) > w) out.push(`after claim ${i + 1}: ${k} (weight ${w}) has ${counts[k]} of ${all} starts, expected ${expected} ± ${w}`);
    }
  });
  for (const [k, w] of Object.entries(weights)) {
    const window = Math.ceil((total - w + 1) / size);
    for (let i = 0; i + window <= taken.length; i++) {
      if (!taken.slice(i, i + window).some((keys) => keys.includes(k))) out.push(`${k} (weight ${w}) missing from claims ${i + 1}-${i + window} (bound: one in every ${window})`);
    }
  }
  return out;
}

const cases: { name: string; weights: Record<string, number> }[] = [
  { name: 'weights 3:1', weights: { heavy: 3, light: 1 } },
  { name: 'weights 1:1', weights: { a: 1, b: 1 } },
  { name: 'several keys, weights 4:2:1:1', weights: { a: 4, b: 2, c: 1, d: 1 } },
];

describe('the fair share across claims', () => {
  for (const { name, weights } of cases) {
    for (const size of [1, 2, 3, 40]) {
      it(`${name}, claims of ${size}: every backlogged key within the bound, shares by weight`, async () => {
        // 48 starts in claims of 1-3 (40-job claims: 4 of them, 160), each key's backlog outlasting them.
        const claims = size === 40 ? 4 : Math.ceil(48 / size);
        const queue = await backlogged(weights, claims * size);
        const taken = await drive(queue, size, claims);
        expect(taken.every((keys) => keys.length === size)).toBe(true);
        expect(breaches(weights, size, taken)).toEqual([]);
      });
    }
  }

  it('the colleague\'s case: claims of 2, weights 3 and 1, the light key gets a quarter of 20 starts', async () => {
    const queue = await backlogged({ heavy: 3, light: 1 }, 40);
    const taken = (await drive(queue, 2, 10)).flat();
    expect(taken.filter((k) => k === 'light').length).toBe(5);
  });

  it('keys held at their cap do not hold the walk: a claim that finds them full moves past them', async () => {
    const queue = await backlogged({ a: 1, b: 1, c: 1 }, 3, 1);
    const held = [...(await claim(queue, 1)), ...(await claim(queue, 1))];
    expect(held.map((j) => j.fairnessKey)).toEqual(['a', 'b']);
    // c frees its slot; a and b stay at their cap of 1.
    await complete(await claim(queue, 1));
    const next: string[] = [];
    for (let i = 0; i < 3; i++) next.push(...(await claim(queue, 1)).map((j) => j.fairnessKey!));
    expect(next).toEqual(['c']);
  });
});
