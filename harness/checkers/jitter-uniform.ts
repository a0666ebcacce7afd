import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { Fleetline } from './lives.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface JitterUniformBounds {
  /** The test's false-alarm rate: the chance that a truly uniform sample fails it. Default 0.001. */
  alpha: number;
  /** Fewer retries than this and the asymptotic critical value does not hold: unknown. Default 30. */
  minRetries: number;
  /** Both ends of a delay are whole milliseconds of the database clock: a delay may be off by this much. Default 1. */
  slackMs: number;
}

/**
 * The one-sample Kolmogorov-Smirnov statistic of `sample` against Uniform(0, 1):
 * the largest gap between the sample's empirical distribution and the identity.
 */
export function ksUniform(sample: readonly number[]): number {
  const u = [...sample].sort((a, b) => a - b);
  const n = u.length;
  let d = 0;
  u.forEach((x, i) => {
    const cdf = Math.min(1, Math.max(0, x));
    d = Math.max(d, (i + 1) / n - cdf, cdf - i / n);
  });
  return d;
}

/** The asymptotic critical value of D at false-alarm rate alpha: c(alpha) / sqrt(n), c(alpha) = sqrt(-ln(alpha / 2) / 2). */
export function ksCritical(alpha: number, n: number): number {
  return Math.sqrt(-Math.log(alpha / 2) / 2) / Math.sqrt(n);
}

/**
 * Full jitter is uniform over its whole window (docs/configuration.md:
 * "retry ceilings: min(cap, base·2^(n−1)), full jitter"; engine/worker/backoff.ts):
 * the wait before retry n is random(0, ceiling), not merely below the ceiling.
 * For every failure that scheduled a retry, u = (retryAt − failedAt) / ceiling,
 * both instants from the failure statement's now() and its new run_at
 * (database clock), the ceiling from the failing worker's own reported
 * settings. Every u must lie in [0, 1] (a hard bound, ± `slackMs`), and the
 * sample must pass a one-sample Kolmogorov-Smirnov test against Uniform(0, 1)
 * at false-alarm rate `alpha` (asymptotic critical value, which needs
 * `minRetries`). "Equal jitter" (ceiling/2 + random(0, ceiling/2)) stays under
 * the cap, so the upper bound alone misses it; its D is about 0.5.
 */
export function checkJitterUniform(history: readonly HistoryEvent[], _final: FinalState, bounds: JitterUniformBounds): InvariantResult {
  const fleet = new Fleetline(history);
  const dead = new Set(history.flatMap((e) => (e.type === 'job:dead' ? [`${e.jobId}/${e.attempt}`] : [])));
  const sample: number[] = [];
  const outside: unknown[] = [];
  for (const e of history) {
    if (e.type !== 'job:failed' || e.dbTime === undefined || dead.has(`${e.jobId}/${e.attempt}`)) continue;
    const s = fleet.queueSettings(e.workerId, e.queue);
    if (!s) continue;
    // The documented ceiling, written out here rather than taken from the engine: a checker must not share its bug.
    const ceilingMs = Math.min(s.backoffCapMs, s.backoffBaseMs * 2 ** Math.max(0, e.attempt - 1));
    const delayMs = e.retryAt - e.dbTime;
    if (delayMs < -bounds.slackMs || delayMs > ceilingMs + bounds.slackMs) outside.push({ jobId: e.jobId, attempt: e.attempt, delayMs, ceilingMs });
    sample.push(delayMs / ceilingMs);
  }
  const n = sample.length;
  const judged = { n, what: 'retries whose delay was drawn' };
  const critical = ksCritical(bounds.alpha, Math.max(1, n));
  const bound = `every delay in [0, ceiling]; KS D <= c(alpha)/sqrt(n) against Uniform(0, ceiling) at alpha ${bounds.alpha} (n >= ${fmt(bounds.minRetries)})`;
  const base = { name: 'jitter-uniform', bound, judged };
  if (outside.length) {
    return { ...base, pass: false, figure: `${fmt(outside.length)} of ${fmt(n)} retry delays outside [0, ceiling]`, examples: firstN(outside) };
  }
  if (n < bounds.minRetries) return { ...base, pass: 'unknown', figure: `${fmt(n)} retries; fewer than ${fmt(bounds.minRetries)} are too few for the test` };
  const d = ksUniform(sample);
  const mean = sample.reduce((a, b) => a + b, 0) / n;
  return {
    ...base,
    pass: d <= critical,
    figure: `KS D = ${fmt(d, 3)} over n = ${fmt(n)} retries (critical ${fmt(critical, 3)} at alpha ${bounds.alpha}); mean delay ${fmt(mean, 3)} of its ceiling (uniform: 0.5); 0 outside [0, ceiling]`,
  };
}

export const jitterUniform: CheckerDef<JitterUniformBounds> = {
  name: 'jitter-uniform',
  says: 'retry delays are uniform over [0, ceiling] (full jitter): a Kolmogorov-Smirnov test at a stated false-alarm rate, and none outside the window',
  check: checkJitterUniform,
  bounds: { alpha: 'number', minRetries: 'number', slackMs: 'number' },
  defaults: { alpha: 0.001, minRetries: 30, slackMs: 1 },
};
