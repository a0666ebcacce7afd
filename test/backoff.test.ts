import { describe, expect, it } from 'vitest';
import { backoffCeilingMs, retryDelayMs } from '../engine/worker/backoff.ts';
import { ceilingDelayMs } from '../harness/mutants/no-jitter.ts';
import { SeededRng } from '../engine/rng.ts';

const policy = { baseMs: 1000, capMs: 300_000 };

describe('backoff with full jitter', () => {
  it('ceilings double from the base and stop at the cap', () => {
    expect([1, 2, 3, 4, 5].map((n) => backoffCeilingMs(n, policy))).toEqual([1000, 2000, 4000, 8000, 16000]);
    expect(backoffCeilingMs(20, policy)).toBe(300_000);
  });

  it('for a fixed seed every delay lies in [0, ceiling], and the mean is about half the ceiling', () => {
    const rng = new SeededRng(42);
    for (const attempt of [1, 3, 6, 12]) {
      const ceiling = backoffCeilingMs(attempt, policy);
      const samples = Array.from({ length: 20_000 }, () => retryDelayMs(attempt, policy, rng));
      expect(Math.min(...samples)).toBeGreaterThanOrEqual(0);
      expect(Math.max(...samples)).toBeLessThanOrEqual(ceiling);
      const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
      // Uniform on [0, c]: sd of the mean is c / sqrt(12 n) ≈ 0.002 c; 2% is ten of those.
      expect(Math.abs(mean / ceiling - 0.5)).toBeLessThan(0.02);
    }
  });

  it('the same seed gives the same delays', () => {
    const a = new SeededRng('s');
    const b = new SeededRng('s');
    const draw = (r: SeededRng) => Array.from({ length: 10 }, (_, i) => retryDelayMs(i + 1, policy, r));
    expect(draw(a)).toEqual(draw(b));
  });

  it('without jitter (the no-jitter mutant) every job waits exactly the ceiling: lockstep', () => {
    const rng = new SeededRng(1);
    const delays = Array.from({ length: 100 }, () => ceilingDelayMs(3, policy, rng));
    expect(new Set(delays)).toEqual(new Set([4000]));
  });
});
