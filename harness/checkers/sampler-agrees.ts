import { NO_ROWS, type EngineSampledQueue, type EventOf, type FinalState, type HistoryEvent, type InvariantResult, type SampledQueue } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface SamplerAgreesBounds {
  /** How far the engine's oldest-unclaimed-age may be from the harness's, ms: the two round differently. Default 2. */
  toleranceMs: number;
  /**
   * How far a figure the engine marks estimated may be from the harness's, as
   * a fraction of the queue's true depth (pending + failed; of its true
   * dead-letter count for dead letters). Default 0.5: docs/metrics.md gives
   * the estimate's measured error.
   */
  estimateError: number;
}

type Sample = EventOf<'sample'> & { harness: NonNullable<EventOf<'sample'>['harness']>; queues: NonNullable<EventOf<'sample'>['queues']> };

const COUNTS = ['pending', 'failed', 'due', 'claimed', 'overdue', 'deadLetters'] as const satisfies readonly (keyof SampledQueue)[];
/** The counts that are estimates when the engine says `estimated` (its queue is past its share of the round's row budget). */
const DEPTH = new Set<string>(['pending', 'failed', 'due']);

/** One count of one queue: exact, or within the bound when the engine marks it an estimate. */
function countAgrees(field: (typeof COUNTS)[number], engine: EngineSampledQueue, own: SampledQueue, bounds: SamplerAgreesBounds): boolean {
  const e = engine[field];
  const o = own[field];
  // A run recorded before estimates: a capped count was a lower bound.
  if (engine.capped && DEPTH.has(field)) return e <= o;
  const estimated = field === 'deadLetters' ? engine.deadLettersEstimated === true : DEPTH.has(field) && engine.estimated;
  if (!estimated) return e === o;
  // Whether a queue has dead letters is never an estimate: the alert's "> 0" depends on it.
  if (field === 'deadLetters' && e > 0 !== o > 0) return false;
  const scale = field === 'deadLetters' ? o : own.pending + own.failed;
  return Math.abs(e - o) <= bounds.estimateError * scale;
}

/**
 * The engine's QueueStateSampler (what /metrics serves and alerts fire on)
 * against the harness's own query, run in the sampler's own transaction: one
 * snapshot and one now(), so nothing moves between the two reads and every
 * figure must match, in every sample. Per queue: pending, failed, due and
 * claimed rows, leases overdue, dead letters (exactly; a count the engine
 * marks estimated within `estimateError` of the queue's true depth, and
 * dead letters' being above 0 exactly), the oldest due job's age (within
 * `toleranceMs`, for rounding); and the done rows. A queue one side does not
 * list reads as all zeros. A wrong sampler query (a priority left out, a state
 * missed, the wrong clock) disagrees as soon as a row it misjudges exists.
 * Unknown without a sample carrying both readings.
 */
export function checkSamplerAgrees(history: readonly HistoryEvent[], _final: FinalState, bounds: SamplerAgreesBounds): InvariantResult {
  const samples = history.filter((e): e is Sample => e.type === 'sample' && e.harness?.queues !== undefined && e.queues !== undefined);
  const base = {
    name: 'sampler-agrees',
    bound: `every sample: per queue pending, failed, due, claimed, overdue and dead-letter counts and done rows equal to the harness's in the same snapshot (a figure the engine marks estimated within ${fmt(bounds.estimateError * 100)} % of the queue's true depth, dead letters' being above 0 exact), oldest-unclaimed-age within ${fmt(bounds.toleranceMs)} ms`,
  };
  if (samples.length === 0) return { ...base, pass: 'unknown', figure: 'no sample with both readings: nothing to judge', judged: { n: 0, what: 'samples with both readings' } };
  const disagreements: Record<string, unknown>[] = [];
  let rowsSeen = 0;
  let estimatedSeen = 0;
  for (const s of samples) {
    let off: Record<string, unknown> | undefined;
    for (const queue of new Set([...Object.keys(s.queues), ...Object.keys(s.harness.queues)])) {
      const engine: EngineSampledQueue = s.queues[queue] ?? { ...NO_ROWS, estimated: false };
      const own = s.harness.queues[queue] ?? NO_ROWS;
      rowsSeen += own.pending + own.failed + own.claimed + own.deadLetters;
      if (engine.estimated || engine.deadLettersEstimated) estimatedSeen++;
      for (const field of COUNTS) {
        if (!countAgrees(field, engine, own, bounds)) off ??= { t: s.t, queue, field, engine: engine[field], harness: own[field], ...(engine.estimated || engine.deadLettersEstimated ? { estimated: true } : {}) };
      }
      if (Math.abs(engine.oldestMs - own.oldestMs) > bounds.toleranceMs) off ??= { t: s.t, queue, field: 'oldestMs', engine: engine.oldestMs, harness: own.oldestMs };
    }
    rowsSeen += s.harness.done;
    if (s.done !== s.harness.done) off ??= { t: s.t, field: 'done', engine: s.done, harness: s.harness.done };
    if (off) disagreements.push(off);
  }
  const agreed = samples.length - disagreements.length;
  const figure = `${fmt(agreed)} of ${fmt(samples.length)} samples agree; ${fmt(rowsSeen)} rows read over them (pending, failed, claimed, done and dead letters); ${fmt(estimatedSeen)} queue figures estimated`;
  // Samples of an empty table agree with any sampler that reads zeros: with no row to misjudge, nothing was tested.
  if (disagreements.length === 0 && rowsSeen === 0) return { ...base, pass: 'unknown', figure: `${figure}: nothing to judge`, judged: { n: 0, what: 'samples with both readings' } };
  return { ...base, pass: disagreements.length === 0, figure, judged: { n: samples.length, what: 'samples with both readings' }, ...(disagreements.length ? { examples: firstN(disagreements) } : {}) };
}

export const samplerAgrees: CheckerDef<SamplerAgreesBounds> = {
  name: 'sampler-agrees',
  says: "the engine's queue-state sampler reads what the harness's own query reads in the same snapshot (depth by state, due, claimed, overdue leases, dead letters, done, oldest-unclaimed-age)",
  check: checkSamplerAgrees,
  bounds: { toleranceMs: 'number', estimateError: 'number' },
  defaults: { toleranceMs: 2, estimateError: 0.5 },
};
