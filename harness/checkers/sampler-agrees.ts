import { NO_ROWS, type EventOf, type FinalState, type HistoryEvent, type InvariantResult, type SampledQueue } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface SamplerAgreesBounds {
  /** How far the engine's oldest-unclaimed-age may be from the harness's, ms: the two round differently. Default 2. */
  toleranceMs: number;
}

type Sample = EventOf<'sample'> & { harness: NonNullable<EventOf<'sample'>['harness']>; queues: NonNullable<EventOf<'sample'>['queues']> };

const COUNTS = ['pending', 'failed', 'due', 'claimed', 'overdue', 'deadLetters'] as const satisfies readonly (keyof SampledQueue)[];
/** The counts that stop at the sampler's depthCapRows, and are lower bounds when it says capped. */
const CAPPED = new Set<string>(['pending', 'failed', 'due']);

/**
 * The engine's QueueStateSampler (what /metrics serves and alerts fire on)
 * against the harness's own query, run in the sampler's own transaction: one
 * snapshot and one now(), so nothing moves between the two reads and every
 * figure must match, in every sample. Per queue: pending, failed, due and
 * claimed rows, leases overdue, dead letters (exactly; a count the engine
 * says it capped may only be lower), the oldest due job's age (within
 * `toleranceMs`, for rounding); and the done rows. A queue one side does not
 * list reads as all zeros. A wrong sampler query (a priority left out, a state
 * missed, the wrong clock) disagrees as soon as a row it misjudges exists.
 * Unknown without a sample carrying both readings.
 */
export function checkSamplerAgrees(history: readonly HistoryEvent[], _final: FinalState, bounds: SamplerAgreesBounds): InvariantResult {
  const samples = history.filter((e): e is Sample => e.type === 'sample' && e.harness?.queues !== undefined && e.queues !== undefined);
  const base = {
    name: 'sampler-agrees',
    bound: `every sample: per queue pending, failed, due, claimed, overdue and dead-letter counts and done rows equal to the harness's in the same snapshot, oldest-unclaimed-age within ${fmt(bounds.toleranceMs)} ms`,
  };
  if (samples.length === 0) return { ...base, pass: 'unknown', figure: 'no sample with both readings: nothing to judge', judged: { n: 0, what: 'samples with both readings' } };
  const disagreements: Record<string, unknown>[] = [];
  let rowsSeen = 0;
  for (const s of samples) {
    let off: Record<string, unknown> | undefined;
    for (const queue of new Set([...Object.keys(s.queues), ...Object.keys(s.harness.queues)])) {
      const engine = s.queues[queue] ?? { ...NO_ROWS, capped: false };
      const own = s.harness.queues[queue] ?? NO_ROWS;
      rowsSeen += own.pending + own.failed + own.claimed + own.deadLetters;
      for (const field of COUNTS) {
        const agrees = engine.capped && CAPPED.has(field) ? engine[field] <= own[field] : engine[field] === own[field];
        if (!agrees) off ??= { t: s.t, queue, field, engine: engine[field], harness: own[field] };
      }
      if (Math.abs(engine.oldestMs - own.oldestMs) > bounds.toleranceMs) off ??= { t: s.t, queue, field: 'oldestMs', engine: engine.oldestMs, harness: own.oldestMs };
    }
    rowsSeen += s.harness.done;
    if (s.done !== s.harness.done) off ??= { t: s.t, field: 'done', engine: s.done, harness: s.harness.done };
    if (off) disagreements.push(off);
  }
  const agreed = samples.length - disagreements.length;
  const figure = `${fmt(agreed)} of ${fmt(samples.length)} samples agree; ${fmt(rowsSeen)} rows read over them (pending, failed, claimed, done and dead letters)`;
  // Samples of an empty table agree with any sampler that reads zeros: with no row to misjudge, nothing was tested.
  if (disagreements.length === 0 && rowsSeen === 0) return { ...base, pass: 'unknown', figure: `${figure}: nothing to judge`, judged: { n: 0, what: 'samples with both readings' } };
  return { ...base, pass: disagreements.length === 0, figure, judged: { n: samples.length, what: 'samples with both readings' }, ...(disagreements.length ? { examples: firstN(disagreements) } : {}) };
}

export const samplerAgrees: CheckerDef<SamplerAgreesBounds> = {
  name: 'sampler-agrees',
  says: "the engine's queue-state sampler reads what the harness's own query reads in the same snapshot (depth by state, due, claimed, overdue leases, dead letters, done, oldest-unclaimed-age)",
  check: checkSamplerAgrees,
  bounds: { toleranceMs: 'number' },
  defaults: { toleranceMs: 2 },
};
