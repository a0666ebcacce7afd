import { DEFAULTS } from '../../engine/defaults.ts';
import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { JobIndex } from './jobs.ts';
import { firstN, fmt, maxOf, type CheckerDef } from './types.ts';

export interface DeadLetterRoutingBounds {
  /**
   * Attempts a poison job may use before it is dead. A poison job kills its
   * worker on every attempt, so the crash-loop verdict (maxCrashes) must
   * retire it, not the attempt budget: default 2, the engine's maxCrashes. A
   * bound of maxAttempts would let the no-crash-detection mutant pass.
   */
  maxAttempts: number;
  /** Time from a poison job's first claim to its dead-lettering, in ms. Default 120,000. */
  maxMs: number;
  /** Kinds that are poison by design. Default ['poison']. Every other job is healthy and must not die. */
  poisonKinds: string[];
  /** Kinds that fail every attempt by design: they die of their budget, judged by attempt-accounting, not as healthy. Default ['failing']. */
  doomedKinds: string[];
}

/**
 * Poison goes to the dead-letter table, quickly; nothing else does.
 *
 * A poison job is one whose kind (the final row's payload kind, else the kind
 * of the `enqueue:invoke` it came from) is a poison kind. Each must end `dead`,
 * within `maxAttempts` attempts (the final row's count, or the `job:dead`
 * event's if larger) and within `maxMs` from its first `job:claimed` to its
 * `job:dead` (or `lease:rescued` with `dead: true`). Every other job that ends
 * dead is a healthy job dead-lettered: a violation.
 */
export function checkDeadLetterRouting(history: readonly HistoryEvent[], final: FinalState, bounds: DeadLetterRoutingBounds): InvariantResult {
  const idx = new JobIndex(history, final);
  const poisonKinds = new Set(bounds.poisonKinds);
  const doomedKinds = new Set(bounds.doomedKinds);
  const firstClaimT = new Map<number, number>();
  const deadAt = new Map<number, { t: number; attempt?: number }>();
  for (const e of history) {
    if (e.type === 'job:claimed' && !firstClaimT.has(e.jobId)) firstClaimT.set(e.jobId, e.t);
    if (e.type === 'job:dead' && !deadAt.has(e.jobId)) deadAt.set(e.jobId, { t: e.t, attempt: e.attempt });
    if (e.type === 'lease:rescued' && e.dead && !deadAt.has(e.jobId)) deadAt.set(e.jobId, { t: e.t, attempt: e.attempts });
  }

  // Jobs an operator dead-lettered by hand (an accepted dead-letter verb): dead by decision, not by routing.
  const byHand = new Set(history.flatMap((e) => (e.type === 'operator:action' && e.verb === 'dead-letter' && e.outcome === 'ok' ? e.jobIds : [])));
  const poisonNotDead: unknown[] = [];
  const tooManyAttempts: unknown[] = [];
  const tooSlow: unknown[] = [];
  const healthyDead: unknown[] = [];
  const times: number[] = [];
  let poison = 0;
  let healthy = 0;
  for (const job of final.jobs) {
    const kind = idx.kindOf(job.id);
    if (kind !== undefined && poisonKinds.has(kind)) {
      poison++;
      if (job.state !== 'dead') {
        poisonNotDead.push({ jobId: job.id, state: job.state, attempts: job.attempts });
        continue;
      }
      const dead = deadAt.get(job.id);
      const attempts = Math.max(job.attempts, dead?.attempt ?? 0);
      if (attempts > bounds.maxAttempts) tooManyAttempts.push({ jobId: job.id, attempts });
      const claimedT = firstClaimT.get(job.id);
      if (dead && claimedT !== undefined) {
        const ms = dead.t - claimedT;
        times.push(ms);
        if (ms > bounds.maxMs) tooSlow.push({ jobId: job.id, firstClaimToDeadMs: ms });
      }
    } else if (!doomedKinds.has(kind ?? '') && !byHand.has(job.id)) {
      healthy++;
      if (job.state === 'dead') healthyDead.push({ jobId: job.id, kind: kind ?? 'unknown', attempts: job.attempts, reason: final.deadLetters.find((d) => d.jobId === job.id)?.reason });
    }
  }
  const violations = poisonNotDead.length + tooManyAttempts.length + tooSlow.length + healthyDead.length;
  const slowest = times.length ? maxOf(times) : undefined;
  const examples = [
    ...firstN(poisonNotDead).map((x) => ({ poisonNotDead: x })),
    ...firstN(tooManyAttempts).map((x) => ({ tooManyAttempts: x })),
    ...firstN(tooSlow).map((x) => ({ tooSlow: x })),
    ...firstN(healthyDead).map((x) => ({ healthyDead: x })),
  ];
  return {
    name: 'dead-letter-routing',
    pass: violations > 0 ? false : final.jobs.length === 0 ? 'unknown' : true,
    figure:
      `${fmt(poison - poisonNotDead.length)} of ${fmt(poison)} poison jobs dead` +
      (slowest === undefined ? '' : `, slowest ${fmt(slowest)} ms from first claim`) +
      `, ${fmt(tooManyAttempts.length)} over the attempt bound; ${fmt(healthyDead.length)} healthy jobs dead`,
    bound: `poison dead within ${fmt(bounds.maxAttempts)} attempts and ${fmt(bounds.maxMs)} ms; 0 healthy dead`,
    // Each poison job could have escaped the dead-letter table, each healthy one landed in it (doomed kinds are not judged).
    judged: { n: poison + healthy, what: 'poison and healthy jobs' },
    ...(examples.length ? { examples } : {}),
  };
}

export const deadLetterRouting: CheckerDef<DeadLetterRoutingBounds> = {
  name: 'dead-letter-routing',
  says: 'every poison job is dead-lettered within its attempt and time bounds, and no healthy job is',
  check: checkDeadLetterRouting,
  bounds: { maxAttempts: 'number', maxMs: 'number', poisonKinds: 'string[]', doomedKinds: 'string[]' },
  defaults: { maxAttempts: DEFAULTS.maxCrashes, maxMs: 120_000, poisonKinds: ['poison'], doomedKinds: ['failing'] },
};
