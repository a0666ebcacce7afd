import { describe, expect, it } from 'vitest';
import { ValidationError } from '../engine/errors.ts';
import { SeededRng } from '../engine/rng.ts';
import { constantTimes } from '../harness/load/constant.ts';
import { sampleDuration, validateDuration, validateLanes, validateMix } from '../harness/load/mix.ts';
import { arrivals, planLoad } from '../harness/load/plan.ts';
import { poissonTimes } from '../harness/load/poisson.ts';
import type { PlanInput } from '../harness/load/types.ts';

const lanes = [
  { queue: 'high', priority: 9, share: 3 },
  { queue: 'low', priority: 0, share: 1 },
];
const input = (model: 'constant' | 'poisson', over: Partial<PlanInput> = {}): PlanInput => ({
  load: { model, rate: 500 },
  durationS: 10,
  lanes,
  mix: [
    { kind: 'normal', share: 9, durationMs: { dist: 'lognormal', medianMs: 20, p99Ms: 200 } },
    { kind: 'effect', share: 1 },
    { kind: 'poison', count: 3, lanes: ['low'] },
  ],
  ...over,
});

describe('constant arrivals', () => {
  it('offers exactly rate x duration jobs, evenly spaced, without drift', () => {
    const times = [...constantTimes(500, 10_000)];
    expect(times.length).toBe(5_000);
    expect(times[1] - times[0]).toBe(2);
    expect(times.at(-1)).toBe(9_998);
    expect([...constantTimes(3, 1_000)]).toEqual([0, 1000 / 3, 2000 / 3]);
  });
});

describe('poisson arrivals', () => {
  it('has a mean gap of 1000/rate ms within 5 standard errors, and gaps as variable as their mean (CV about 1)', () => {
    const times = [...poissonTimes(500, 20_000, new SeededRng(42))];
    const gaps = times.map((t, i) => t - (i === 0 ? 0 : times[i - 1]));
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    const sd = Math.sqrt(gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / gaps.length);
    // Exponential gaps: sd = mean, so the mean's standard error is 2 ms / sqrt(n).
    expect(Math.abs(mean - 2)).toBeLessThan((5 * 2) / Math.sqrt(gaps.length));
    expect(sd / mean).toBeGreaterThan(0.9);
    expect(sd / mean).toBeLessThan(1.1);
    // The count is Poisson(10,000): within 5 sd (5 x 100).
    expect(Math.abs(times.length - 10_000)).toBeLessThan(500);
  });

  it('is the same for the same seed and different for another', () => {
    const a = [...poissonTimes(100, 5_000, new SeededRng(1))];
    expect([...poissonTimes(100, 5_000, new SeededRng(1))]).toEqual(a);
    expect([...poissonTimes(100, 5_000, new SeededRng(2))]).not.toEqual(a);
  });
});

describe('the load plan', () => {
  it('assigns ops in order with times ascending, and is deterministic by seed for both models', () => {
    for (const model of ['constant', 'poisson'] as const) {
      const plan = planLoad(input(model), new SeededRng(9));
      expect(plan.map((a) => a.op)).toEqual(plan.map((_, i) => i));
      expect(plan.every((a, i) => i === 0 || a.atMs >= plan[i - 1].atMs)).toBe(true);
      expect(planLoad(input(model), new SeededRng(9))).toEqual(plan);
      expect(planLoad(input(model), new SeededRng(10))).not.toEqual(plan);
    }
  });

  it('splits kinds and lanes by their shares within statistical bounds, and places count jobs exactly', () => {
    const plan = planLoad(input('constant'), new SeededRng(5));
    expect(plan.length).toBe(5_000);
    const n = (pred: (a: (typeof plan)[number]) => boolean) => plan.filter(pred).length;
    const poison = plan.filter((a) => a.kind === 'poison');
    expect(poison.length).toBe(3);
    expect(poison.every((a) => a.queue === 'low' && a.priority === 0)).toBe(true);
    // Binomial(4,997, 0.1): sd about 21; 5 sd.
    expect(Math.abs(n((a) => a.kind === 'effect') - 500)).toBeLessThan(106);
    // Lane high: share 3/4; sd about 31.
    expect(Math.abs(n((a) => a.queue === 'high') - 3_750)).toBeLessThan(155);
  });

  it('samples handler durations from the distribution, and gives flaky jobs their failing attempts', () => {
    const plan = planLoad(input('constant', { mix: [{ kind: 'normal', share: 1, durationMs: { dist: 'lognormal', medianMs: 20, p99Ms: 200 } }, { kind: 'flaky', share: 1 }] }), new SeededRng(3));
    const normal = plan.filter((a) => a.kind === 'normal').map((a) => a.params.durationMs).sort((a, b) => a - b);
    const median = normal[Math.floor(normal.length / 2)];
    expect(median).toBeGreaterThanOrEqual(18);
    expect(median).toBeLessThanOrEqual(22);
    const p99 = normal[Math.floor(normal.length * 0.99)];
    expect(p99).toBeGreaterThan(140);
    expect(p99).toBeLessThan(280);
    expect(plan.find((a) => a.kind === 'flaky')!.params).toEqual({ durationMs: 10, failAttempts: 2 });
  });

  it('keeps arrival times fixed when only the mix changes (independent seed streams)', () => {
    const a = planLoad(input('poisson'), new SeededRng(11)).map((x) => x.atMs);
    const b = planLoad(input('poisson', { mix: [{ kind: 'normal', share: 1 }] }), new SeededRng(11)).map((x) => x.atMs);
    expect(b).toEqual(a);
  });

  it('appends count jobs whose time falls after the last arrival, so the count is exact', () => {
    const plan = [...arrivals({ load: { model: 'constant', rate: 1 }, durationS: 2, lanes, mix: [{ kind: 'normal', share: 1 }, { kind: 'poison', count: 5 }] }, new SeededRng(1))];
    expect(plan.filter((a) => a.kind === 'poison').length).toBe(5);
  });

  it('sampleDuration honours each distribution', () => {
    const rng = new SeededRng(1);
    expect(sampleDuration({ dist: 'fixed', ms: 7 }, rng)).toBe(7);
    for (let i = 0; i < 100; i++) {
      const u = sampleDuration({ dist: 'uniform', minMs: 5, maxMs: 9 }, rng);
      expect(u).toBeGreaterThanOrEqual(5);
      expect(u).toBeLessThanOrEqual(9);
      expect(sampleDuration({ dist: 'exponential', meanMs: 100, maxMs: 150 }, rng)).toBeLessThanOrEqual(150);
    }
  });
});

describe('load validation', () => {
  it('names the field and what was expected', () => {
    expect(() => validateLanes([], 'lanes')).toThrow('lanes: expected a non-empty array of { queue, priority, share }, got []');
    expect(() => validateLanes([{ queue: 'a', priority: 12, share: 1 }], 'lanes')).toThrow('lanes[0].priority: expected an integer 0-9, got 12');
    expect(() => validateLanes([{ queue: 'a', priority: 1, share: 1 }, { queue: 'a', priority: 2, share: 1 }], 'lanes')).toThrow(/lanes\[1\].queue: "a" appears twice/);
    expect(() => validateMix([{ kind: 'weird', share: 1 }], lanes, 'mix')).toThrow('mix[0].kind: expected one of normal, poison, slow, flaky, effect, downstream, failing, outbox, got "weird"');
    expect(() => validateMix([{ kind: 'normal', share: 1, count: 2 }], lanes, 'mix')).toThrow('mix[0]: give share or count, exactly one of them');
    expect(() => validateMix([{ kind: 'poison', count: 2 }], lanes, 'mix')).toThrow(/mix: expected at least one entry with a share above 0/);
    expect(() => validateMix([{ kind: 'normal', share: 1, lanes: ['mid'] }], lanes, 'mix')).toThrow('mix[0].lanes[0]: "mid" is not a lane; expected one of high, low');
    expect(() => validateDuration({ dist: 'lognormal', medianMs: 50, p99Ms: 10 }, 'd')).toThrow('d.p99Ms: expected >= medianMs (50), got 10');
    expect(() => validateDuration({ dist: 'gamma' }, 'd')).toThrow(ValidationError);
  });
});
