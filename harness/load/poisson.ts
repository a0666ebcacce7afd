import type { Rng } from '../../engine/rng.ts';

/**
 * Poisson arrivals: independent offers at an average `rate`, so gaps are
 * exponential with mean 1000 / rate ms. Real traffic bunches like this, and
 * bunches are what make queues grow; a constant rate hides them.
 */
export function* poissonTimes(ratePerS: number, durationMs: number, rng: Rng): Generator<number> {
  const meanGapMs = 1000 / ratePerS;
  let t = 0;
  for (;;) {
    // 1 - next() is in (0, 1], so the log is finite.
    t += -Math.log(1 - rng.next()) * meanGapMs;
    if (t >= durationMs) return;
    yield t;
  }
}
