// jitter-uniform on small hand-written histories: retry delays uniform over [0, ceiling] pass, "equal jitter"
// (never in the window's first half) and a delay past the ceiling fail, too few retries are unknown.
import { describe, expect, it } from 'vitest';
import { checkJitterUniform, ksCritical, ksUniform } from '../harness/checkers/jitter-uniform.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h } from './support/history-builder.ts';

const bounds = { alpha: 0.001, minRetries: 30, slackMs: 1 };
const final = finalState([]);
/** Worker w1: base 1,000 ms, cap 8,000 ms. Retry i of `fractions` waits that fraction of attempt (i % 5 + 1)'s ceiling. */
function retries(fractions: number[]): HistoryEvent[] {
  return [
    h.settings(0, 'w1', { backoffBaseMs: 1_000, backoffCapMs: 8_000 }),
    ...fractions.map((f, i) => {
      const attempt = (i % 5) + 1;
      const ceiling = Math.min(8_000, 1_000 * 2 ** (attempt - 1));
      const failedAt = 100_000 + i * 10;
      return h.failed(i + 1, i + 1, 'w1', attempt, { dbTime: failedAt, retryAt: failedAt + Math.floor(f * ceiling) });
    }),
  ];
}
/** n evenly spread fractions of [0, 1): what a uniform sample looks like at its best. */
const even = (n: number, from = 0, to = 1) => Array.from({ length: n }, (_, i) => from + ((i + 0.5) / n) * (to - from));

describe('jitter-uniform', () => {
  it('computes the KS statistic and its critical value', () => {
    expect(ksUniform([0.5])).toBe(0.5);
    expect(ksUniform(even(10))).toBeCloseTo(0.05, 10);
    expect(ksCritical(0.001, 100)).toBeCloseTo(0.19495, 4);
  });

  it('passes delays spread over the whole window, and says what it judged', () => {
    const r = checkJitterUniform(retries(even(60)), final, bounds);
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 60, what: 'retries whose delay was drawn' });
    expect(r.figure).toMatch(/^KS D = 0\.0\d+ over n = 60 retries \(critical 0\.252 at alpha 0\.001\)/);
  });

  it('fails (negative control) equal jitter: under the ceiling, but never in its first half', () => {
    const r = checkJitterUniform(retries(even(60, 0.5, 1)), final, bounds);
    expect(r.pass).toBe(false);
    expect(r.figure).toMatch(/^KS D = 0\.5\d* over n = 60/);
  });

  it('fails a delay past its ceiling, however few retries there are', () => {
    const r = checkJitterUniform(retries([0.2, 1.5]), final, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ jobId: 2, attempt: 2, delayMs: 3_000, ceilingMs: 2_000 }]);
  });

  it('is unknown below minRetries, and leaves out failures that killed the job', () => {
    const history = [...retries(even(29)), h.failed(99, 99, 'w1', 6, { dbTime: 1, retryAt: 1 }), h.dead(99, 99, 6)];
    const r = checkJitterUniform(history, final, bounds);
    expect(r.pass).toBe('unknown');
    expect(r.judged?.n).toBe(29);
  });
});
