import type { EventOf, FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface SamplerAgreesBounds {
  /** How far the engine's oldest-unclaimed-age may be from the harness's, ms, beyond the time between the two reads. Default 500. */
  toleranceMs: number;
  /** Share of samples (0-1) that must agree: the oldest job may be claimed between the two reads, which no tolerance covers. Default 0.9. */
  minAgreeShare: number;
}

type Sample = EventOf<'sample'> & { harness: NonNullable<EventOf<'sample'>['harness']> };

/**
 * The engine's QueueStateSampler (what /metrics serves and alerts fire on)
 * against the harness's own query, read just before and just after it: per
 * queue, the engine's oldest-unclaimed-age lies between the two harness
 * readings, widened by `toleranceMs` and by the time the three reads took
 * (an age grows one ms per ms; the oldest job may be claimed in between,
 * which the bracket covers), and the dead-letter depth is never above the
 * harness's (read later; dead letters only accumulate in a run).
 * A sample agrees when every queue does; at least `minAgreeShare` of the
 * samples must. A wrong sampler query (a priority left out, the wrong
 * clock, a state missed) disagrees on most samples once anything waits.
 * Unknown without a sample carrying both readings.
 */
export function checkSamplerAgrees(history: readonly HistoryEvent[], _final: FinalState, bounds: SamplerAgreesBounds): InvariantResult {
  const samples = history.filter((e): e is Sample => e.type === 'sample' && e.harness !== undefined);
  const base = { name: 'sampler-agrees', bound: `>= ${fmt(bounds.minAgreeShare * 100)} % of samples within the harness's before/after bracket ± ${fmt(bounds.toleranceMs)} ms (+ the time the reads took) per queue; dead-letter depth not above the harness's` };
  if (samples.length === 0) return { ...base, pass: 'unknown', figure: 'no sample with both readings: nothing to judge' };
  const disagreements: Record<string, unknown>[] = [];
  let worst = 0;
  let waiting = 0;
  for (const s of samples) {
    const slack = bounds.toleranceMs + Math.max(0, s.harness.afterMs);
    const queues = new Set([...Object.keys(s.oldestUnclaimedAgeMs), ...Object.keys(s.harness.oldestUnclaimedAgeMs)]);
    let off: Record<string, unknown> | undefined;
    for (const q of queues) {
      const engine = s.oldestUnclaimedAgeMs[q] ?? 0;
      const own = s.harness.oldestUnclaimedAgeMs[q] ?? 0;
      // A queue missing from the before reading had nothing waiting then (its
      // first due job, or a clock step, came between the reads), not `own`.
      const before = s.harness.oldestBeforeMs === undefined ? own : (s.harness.oldestBeforeMs[q] ?? 0);
      const lo = Math.min(before, own);
      const hi = Math.max(before, own);
      if (Math.max(engine, own) > bounds.toleranceMs) waiting++;
      const outside = engine < lo ? lo - engine : engine > hi ? engine - hi : 0;
      worst = Math.max(worst, outside);
      if (outside > slack) off ??= { t: s.t, queue: q, engineMs: engine, harnessMs: own, ...(before !== own ? { harnessBeforeMs: before } : {}), slackMs: slack };
    }
    if (s.deadLetterDepth > s.harness.deadLetterDepth) off ??= { t: s.t, engineDeadLetters: s.deadLetterDepth, harnessDeadLetters: s.harness.deadLetterDepth };
    if (off) disagreements.push(off);
  }
  const agreed = samples.length - disagreements.length;
  const share = agreed / samples.length;
  return {
    ...base,
    pass: share >= bounds.minAgreeShare,
    figure:
      `${fmt(agreed)} of ${fmt(samples.length)} samples agree (${fmt(share * 100, 1)} %); engine at most ${fmt(worst)} ms outside the harness's bracket; ` +
      `${fmt(waiting)} queue readings with a job waiting over ${fmt(bounds.toleranceMs)} ms`,
    ...(disagreements.length ? { examples: firstN(disagreements) } : {}),
  };
}

export const samplerAgrees: CheckerDef<SamplerAgreesBounds> = {
  name: 'sampler-agrees',
  says: "the engine's queue-state sampler reads what the harness's own query reads (oldest-unclaimed-age, dead-letter depth)",
  check: checkSamplerAgrees,
  bounds: { toleranceMs: 'number', minAgreeShare: 'number' },
  defaults: { toleranceMs: 500, minAgreeShare: 0.9 },
};
