import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { failoverExcused } from './failover.ts';
import { JobIndex } from './jobs.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface ExactlyOneEffectBounds {
  /** Job kinds whose handler applies an effect. Default ['effect']. */
  kinds: string[];
  /**
   * Leave out the effect keys and jobs a failover lost an acknowledged write of (an effect whose commit the
   * promoted primary never had runs again): each is listed with its cause by failover-async, which judges it.
   * Every other key and job is judged. Default false.
   */
  exceptFailoverLosses?: boolean;
}

/**
 * Duplicate delivery is allowed; a duplicate effect is not. Reads the effect
 * counts in the final state (`final.effects`, by effect key: the job's
 * idempotency key, which for generated jobs is `op:<n>`, else `job:<id>`):
 *
 * - duplicate: any effect key counted more than once, whatever its job's kind;
 * - missing: a job of an effect kind that ended `done` with no effect (the
 *   completion committed without its effect: the other half of a torn boundary).
 *
 * A dead or unfinished effect job may have 0 or 1 effects. The `effect:applied`
 * events are not counted: a worker reports them before its commit, which may roll back.
 */
export function checkExactlyOneEffect(history: readonly HistoryEvent[], final: FinalState, bounds: ExactlyOneEffectBounds): InvariantResult {
  const idx = new JobIndex(history, final);
  const kinds = new Set(bounds.kinds);
  const excused = bounds.exceptFailoverLosses ? failoverExcused(history, final) : null;
  const left = new Set<string>();
  const excuse = (key: string, jobId?: number) => {
    const out = excused !== null && (excused.keys.has(key) || (jobId !== undefined && excused.jobIds.has(jobId)));
    if (out) left.add(key);
    return out;
  };
  const duplicates = Object.entries(final.effects)
    .filter(([key, n]) => n > 1 && !excuse(key))
    .map(([key, count]) => ({ key, count }));
  const missing: { jobId: number; key: string }[] = [];
  let effectJobs = 0;
  // Every key applied could have been applied twice; every done effect job could have gone without its effect.
  const telling = new Set(Object.keys(final.effects));
  for (const job of final.jobs) {
    if (!kinds.has(idx.kindOf(job.id) ?? '')) continue;
    const key = job.idempotencyKey ?? `job:${job.id}`;
    if (excuse(key, job.id)) continue;
    effectJobs++;
    if (job.state === 'done') telling.add(key);
    if (job.state === 'done' && !(final.effects[key] >= 1)) missing.push({ jobId: job.id, key });
  }
  for (const key of left) telling.delete(key);
  const keys = Object.keys(final.effects).length;
  const pass = duplicates.length > 0 || missing.length > 0 ? false : effectJobs === 0 && keys === 0 ? 'unknown' : true;
  const examples = [...firstN(duplicates).map((d) => ({ duplicate: d.key, count: d.count })), ...firstN(missing).map((m) => ({ missing: m.key, jobId: m.jobId }))];
  return {
    name: 'exactly-one-effect',
    pass,
    figure:
      `${fmt(duplicates.length)} duplicated and ${fmt(missing.length)} missing effects over ${fmt(effectJobs)} effect jobs (${fmt(keys)} effect keys)` +
      (excused ? `; ${fmt(left.size)} keys left out (a failover lost a write of each: failover-async lists it)` : ''),
    bound: 'exactly 1 effect per done effect job, never more than 1 per key',
    judged: { n: telling.size, what: 'effect keys applied or owed by a done effect job' },
    ...(examples.length ? { examples } : {}),
  };
}

export const exactlyOneEffect: CheckerDef<ExactlyOneEffectBounds> = {
  name: 'exactly-one-effect',
  says: 'every effect job that completed applied its effect exactly once; no effect key applied twice',
  check: checkExactlyOneEffect,
  bounds: { kinds: 'string[]', exceptFailoverLosses: 'boolean' },
  defaults: { kinds: ['effect'], exceptFailoverLosses: false },
};
