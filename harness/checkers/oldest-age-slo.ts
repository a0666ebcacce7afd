import type { EventOf, FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { fmt, maxOf, percentile, type CheckerDef, type WindowMs } from './types.ts';

export interface OldestAgeSloBounds {
  /** The SLO on oldest-unclaimed-age, in ms: p99 and max outside the incident must not exceed it. Default 5,000. */
  sloMs: number;
  /** The declared incident, in ms since the run started; null (the default) when the scenario declares none. */
  incident: WindowMs | null;
  /** Longest the age may stay over the SLO after the incident window ends, in ms. Default 60,000. */
  maxRecoverMs: number;
  /** Queues to watch. Default [] : the oldest over every queue. */
  queues: string[];
}

/**
 * Oldest-unclaimed-age is the SLO that matters (the source document's words):
 * a queue can be deep and healthy, but not old.
 *
 * Reads `sample` events, by the harness's own reading (`sample.harness`,
 * harness/runner/harness.sql), never the engine's sampler, whose figures are
 * under test (sampler-agrees). Each sample's age is the largest over the
 * watched queues. Outside the incident, p99 and max must be within the SLO. The
 * incident is excused, and so is the recovery after it, up to the first sample
 * at or after the window's end that is back within the SLO; that recovery
 * time is bounded by `maxRecoverMs`. A relapse after recovery counts.
 */
/** Oldest-unclaimed-age over `queues` (all when empty) at each sample, by the harness's own reading. */
export function harnessAgeSamples(history: readonly HistoryEvent[], queues: readonly string[]): { t: number; age: number }[] {
  return history
    .filter((e): e is EventOf<'sample'> & { harness: NonNullable<EventOf<'sample'>['harness']> } => e.type === 'sample' && e.harness !== undefined)
    .map((s) => {
      const entries = Object.entries(s.harness.oldestUnclaimedAgeMs).filter(([q]) => queues.length === 0 || queues.includes(q));
      return { t: s.t, age: Math.max(0, maxOf(entries.map(([, v]) => v)) || 0) };
    });
}

export function checkOldestAgeSlo(history: readonly HistoryEvent[], _final: FinalState, bounds: OldestAgeSloBounds): InvariantResult {
  const samples = harnessAgeSamples(history, bounds.queues);
  const base = { name: 'oldest-age-slo', bound: `p99 and max <= ${fmt(bounds.sloMs)} ms outside the incident` };
  const what = 'samples outside the incident';
  if (samples.length === 0) return { ...base, pass: 'unknown', figure: 'no harness samples recorded', judged: { n: 0, what } };

  const inc = bounds.incident;
  let recoveredT: number | undefined;
  if (inc) recoveredT = samples.find((s) => s.t >= inc.toMs && s.age <= bounds.sloMs)?.t;
  // A run shorter than its declared incident (`--duration` cut it) that ended back under the SLO
  // recovered inside the window; no later sample is needed to say so.
  const last = samples[samples.length - 1];
  const endedInside = inc !== null && recoveredT === undefined && last.t < inc.toMs && last.age <= bounds.sloMs;
  if (endedInside) recoveredT = inc.toMs;
  const excusedUntil = inc ? (recoveredT ?? Number.POSITIVE_INFINITY) : Number.NEGATIVE_INFINITY;
  const outside = samples.filter((s) => !inc || s.t < inc.fromMs || s.t >= excusedUntil).map((s) => s.age);
  const p99 = percentile(outside, 99);
  const max = maxOf(outside);
  const peakInIncident = inc ? maxOf([0, ...samples.filter((s) => s.t >= inc.fromMs && s.t < excusedUntil).map((s) => s.age)]) : undefined;
  const recoverMs = inc ? (recoveredT === undefined ? Number.POSITIVE_INFINITY : recoveredT - inc.toMs) : undefined;

  const sloOk = outside.length === 0 || max <= bounds.sloMs;
  const recoverOk = recoverMs === undefined || recoverMs <= bounds.maxRecoverMs;
  const figure =
    `p99 ${fmt(p99)} ms, max ${fmt(max)} ms over ${fmt(outside.length)} samples outside the incident` +
    (inc
      ? `; peak ${fmt(peakInIncident!)} ms in the incident (${fmt(inc.fromMs)}-${fmt(inc.toMs)} ms); ` +
        (recoveredT === undefined
          ? 'never recovered'
          : endedInside
            ? `back under the SLO when the run ended at ${fmt(last.t)} ms, inside it`
            : `recovered ${fmt(recoverMs!)} ms after it`)
      : '');
  return {
    ...base,
    bound: base.bound + (inc ? `; recovery <= ${fmt(bounds.maxRecoverMs)} ms` : ''),
    pass: !sloOk || !recoverOk ? false : outside.length === 0 ? 'unknown' : true,
    figure,
    judged: { n: outside.length, what },
  };
}

export const oldestAgeSlo: CheckerDef<OldestAgeSloBounds> = {
  name: 'oldest-age-slo',
  says: 'oldest-unclaimed-age stays within the SLO outside the declared incident, and recovers within its bound after it',
  check: checkOldestAgeSlo,
  bounds: { sloMs: 'number', incident: 'window', maxRecoverMs: 'number', queues: 'string[]' },
  defaults: { sloMs: 5_000, incident: null, maxRecoverMs: 60_000, queues: [] },
};
