import { afterEach, describe, expect, it } from 'vitest';
import { enqueueMany } from '../engine/enqueue.ts';
import { Events, type EngineEvents } from '../engine/events.ts';
import { SeededRng } from '../engine/rng.ts';
import { systemClock } from '../engine/clock.ts';
import { Worker } from '../engine/worker/worker.ts';
import { applyMutant, type MutantName } from '../harness/mutants/index.ts';
import { freshDatabase } from './support/db.ts';
import { countByState } from './support/jobs.ts';
import { until } from './support/wait.ts';

const { db } = await freshDatabase();
const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop(0)));
});

const AGING_MS = 200;
const HIGH = 9;
const LOW = 0;
const OVERTAKE_WINDOW_MS = (HIGH - LOW) * AGING_MS;

/**
 * Capacity: one worker, 4 slots, 40 ms jobs = 100 jobs/s. High-priority jobs
 * fall due at 200/s (twice capacity) for 3 s, low ones at 5/s beside them.
 * Every job is enqueued up front with its run_at, so arrivals follow the plan
 * whatever the worker does (an open model).
 */
async function saturate(queue: string, mutant?: MutantName) {
  const [{ now }] = (await db.query('SELECT now()')).rows;
  const start = now.getTime() + 500;
  const jobs = [
    ...Array.from({ length: 600 }, (_, i) => ({ queue, payload: {}, options: { priority: HIGH, runAt: new Date(start + i * 5) } })),
    ...Array.from({ length: 15 }, (_, i) => ({ queue, payload: {}, options: { priority: LOW, runAt: new Date(start + i * 200) } })),
  ];
  await enqueueMany(db, jobs);
  const events = new Events();
  const claims: EngineEvents['job:claimed'][] = [];
  events.on('job:claimed', (e) => claims.push(e));
  const w = new Worker({
    db,
    handlers: { [queue]: () => systemClock.sleep(40) },
    concurrency: 4,
    pollMs: 10,
    agingMs: AGING_MS,
    events,
    rng: new SeededRng(5),
  });
  workers.push(w);
  const undo = mutant ? applyMutant(mutant) : () => {};
  try {
    w.start();
    await until(`${queue} drained`, async () => (await countByState(db, queue)).done === 615, 60_000, 100);
  } finally {
    await w.stop(0);
    undo();
  }
  const wait = (c: EngineEvents['job:claimed']) => c.dbClaimedAt - c.runAt;
  // Capacity as measured in this run (the machine is shared): jobs per ms while saturated.
  const claimTimes = claims.map((c) => c.dbClaimedAt);
  const capacityPerMs = claims.length / (Math.max(...claimTimes) - Math.min(...claimTimes));
  const k = 1 / 5 / capacityPerMs; // high offered at one per 5 ms
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const low = claims.filter((c) => c.priority === LOW);
  const high = claims.filter((c) => c.priority === HIGH);
  // The overtaking rule: a high job claimed before a low one became due less than (9-0) * agingMs after it.
  const overtakes = low.flatMap((l) =>
    high.filter((h) => h.dbClaimedAt < l.dbClaimedAt && h.runAt > l.runAt + OVERTAKE_WINDOW_MS).map((h) => ({ low: l.jobId, high: h.jobId, lRun: l.runAt - start, lClaim: l.dbClaimedAt - start, hRun: h.runAt - start, hClaim: h.dbClaimedAt - start })),
  );
  return {
    overtakes,
    k,
    lowMaxWait: Math.max(...low.map(wait)),
    lowMedian: median(low.map(wait)),
    highMedian: median(high.map(wait)),
    highMaxWait: Math.max(...high.map(wait)),
  };
}

describe('priority lanes with aging', () => {
  it('under a high lane at 2x capacity, no high job overtakes a low one by more than (9-0) x agingMs, and high still waits less', async () => {
    const r = await saturate('fair');
    expect(r.k).toBeGreaterThan(1.5); // the high lane really was saturated
    expect(r.overtakes).toEqual([]);
    expect(r.highMedian).toBeLessThan(r.lowMedian);
    console.log('aging on:', r);
  });

  it('with aging off (the no-aging mutant) the same load starves the low lane', async () => {
    const r = await saturate('unfair', 'no-aging');
    expect(r.overtakes.length).toBeGreaterThan(0);
    console.log('aging off:', { ...r, overtakes: r.overtakes.length });
  });
});
