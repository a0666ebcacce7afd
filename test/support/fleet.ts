import { afterEach } from 'vitest';
import { systemClock } from '../../engine/clock.ts';
import { Db } from '../../engine/db.ts';
import type { Job } from '../../engine/job.ts';
import { SeededRng } from '../../engine/rng.ts';
import type { WorkerOptions } from '../../engine/worker/options.ts';
import { Worker } from '../../engine/worker/worker.ts';

/**
 * `n` workers, each with its own pool (so their claims really run side by
 * side), stopped and closed after each test of the file that calls
 * useFleet().
 */
export function useFleet(url: string): (n: number, options: Omit<WorkerOptions, 'db'>) => void {
  const workers: Worker[] = [];
  const pools: Db[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop(0)));
    await Promise.all(pools.splice(0).map((p) => p.close()));
  });
  return (n, options) => {
    for (let i = 0; i < n; i++) {
      const pool = new Db({ connectionString: url, maxConnections: 3 });
      pools.push(pool);
      const w = new Worker({ db: pool, rng: new SeededRng(i), pollMs: 20, rescueIntervalMs: 50, workerId: `w${i}`, ...options });
      workers.push(w);
      w.start();
    }
  };
}

/**
 * A downstream in this process: counts calls in progress, overall and per
 * job's fairnessKey, and remembers the most at once.
 */
export function downstream(workMs: number) {
  const state = { now: 0, max: 0, calls: 0, nowByKey: new Map<string, number>(), maxByKey: new Map<string, number>() };
  const handler = async (_payload: unknown, ctx: { job: Job }) => {
    const key = ctx.job.fairnessKey;
    state.now++;
    state.calls++;
    state.max = Math.max(state.max, state.now);
    if (key !== null) {
      state.nowByKey.set(key, (state.nowByKey.get(key) ?? 0) + 1);
      state.maxByKey.set(key, Math.max(state.maxByKey.get(key) ?? 0, state.nowByKey.get(key)!));
    }
    try {
      await systemClock.sleep(workMs);
    } finally {
      state.now--;
      if (key !== null) state.nowByKey.set(key, state.nowByKey.get(key)! - 1);
    }
  };
  return { state, handler };
}
