import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { eventsOf } from '../history.ts';
import { firstN, fmt, maxOf, minOf, type CheckerDef } from './types.ts';

export interface TenantFairnessBounds {
  /** The fair queue. */
  queue: string;
  /** The tenant that floods its queue. */
  noisyKey: string;
  /** The longest a quiet tenant's job may wait, due to first claimed (database clock), while the noisy one floods. */
  maxWaitMs: number;
}

/**
 * While one tenant floods a fair queue, no other tenant's job waits longer
 * than the bound: the fair share (docs/operating.md, "Tenants") gives every
 * key with a job due a turn within one walk of the keys, so a quiet tenant's
 * wait is its turn, not the flood's length. A job's wait is its first claim's
 * database time minus its due time (run_at), both on the database clock. The
 * flood is the span from the noisy key's first job falling due to its last
 * claim; the quiet jobs that fell due inside it are judged, wherever their
 * claim came (a queue that served them only after the flood made them wait
 * it out). Inconclusive when the noisy key was never claimed or no quiet job
 * fell due during its flood.
 */
export function checkTenantFairness(history: readonly HistoryEvent[], _final: FinalState, bounds: TenantFairnessBounds): InvariantResult {
  const firstClaims = new Map<number, Extract<HistoryEvent, { type: 'job:claimed' }>>();
  for (const c of eventsOf(history, 'job:claimed')) {
    if (c.queue === bounds.queue && c.fairnessKey != null && !firstClaims.has(c.jobId)) firstClaims.set(c.jobId, c);
  }
  const claims = [...firstClaims.values()].filter((c) => c.dbTime !== undefined);
  const noisyClaims = claims.filter((c) => c.fairnessKey === bounds.noisyKey);
  const noisy = noisyClaims.map((c) => c.dbTime!);
  const from = noisy.length ? minOf(noisyClaims.map((c) => c.runAt)) : Infinity;
  const to = noisy.length ? maxOf(noisy) : -Infinity;
  const judged = claims.filter((c) => c.fairnessKey !== bounds.noisyKey && c.runAt >= from && c.runAt <= to);
  const wait = (c: (typeof judged)[number]) => c.dbTime! - c.runAt;
  const late = judged.filter((c) => wait(c) > bounds.maxWaitMs);
  const worst = maxOf(judged.map(wait));
  return {
    name: 'tenant-fairness',
    pass: late.length > 0 ? false : judged.length === 0 ? 'unknown' : true,
    figure: noisy.length
      ? `${fmt(noisy.length)} jobs of ${bounds.noisyKey}, due to last claimed over ${fmt(to - from)} ms; quiet tenants' longest wait ${fmt(judged.length ? worst : 0)} ms over ${fmt(judged.length)} jobs, ${fmt(late.length)} past the bound`
      : `no job of ${bounds.noisyKey} was claimed`,
    bound: `no quiet tenant's job waits over ${fmt(bounds.maxWaitMs)} ms from due to claimed while ${bounds.noisyKey} floods`,
    judged: { n: judged.length, what: `quiet tenants' jobs due while ${bounds.noisyKey} flooded` },
    ...(late.length ? { examples: firstN(late).map((c) => ({ jobId: c.jobId, key: c.fairnessKey, waitMs: wait(c), t: c.t })) } : {}),
  };
}

export const tenantFairness: CheckerDef<TenantFairnessBounds> = {
  name: 'tenant-fairness',
  says: "while one tenant floods a fair queue, no other tenant's job waits longer than the stated bound",
  check: checkTenantFairness,
  bounds: { queue: 'string', noisyKey: 'string', maxWaitMs: 'number' },
  defaults: { queue: 'tenants', noisyKey: 'noisy', maxWaitMs: 2_000 },
};
