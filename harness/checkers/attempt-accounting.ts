import { convictedAsCrashLoop, type FinalState, type HistoryEvent, type InvariantResult } from '../history.ts';
import { JobIndex } from './jobs.ts';
import { Fleetline, jobLives } from './lives.ts';
import { firstN, fmt, minOf, type CheckerDef } from './types.ts';

export interface AttemptAccountingBounds {
  /** Kinds that fail every attempt: each must end dead by exhausting its budget. Default ['failing']. */
  doomedKinds: string[];
  /** Jobs that must have exhausted their budget for the check to mean anything (else unknown). Default 1. */
  minExhausted: number;
}

/**
 * Every attempt is accounted for, from the claims in the history and the
 * final rows:
 *
 * - attempts are charged once per claim: each claim's attempt number is one
 *   above the last (the same again after a hand-back or a deferral, which are uncharged),
 *   never above the job's budget, and the row's final count is the last claim's;
 * - every attempt but a successful last one left an error entry: a done job
 *   has attempts − 1 of them, a dead job exactly `attempts`;
 * - a job that used its whole budget without finishing is dead, with its
 *   dead-letter row carrying the same attempts and errors; every dead job
 *   has its dead-letter row;
 * - a job is never dead before its budget unless convicted as a crash loop
 *   (reason "crashed its worker", crash count at least the workers' maxCrashes);
 * - a job of a doomed kind ends dead with exactly its budget used.
 *
 * Unfinished jobs are not judged. Unknown when fewer than `minExhausted`
 * jobs ran out of their budget (nothing showed what exhaustion does) or when
 * the final state predates attempt budgets being read.
 */
export function checkAttemptAccounting(history: readonly HistoryEvent[], final: FinalState, bounds: AttemptAccountingBounds): InvariantResult {
  const idx = new JobIndex(history, final);
  const lives = jobLives(history);
  const maxCrashes = minOf(new Fleetline(history).allSettings().map((s) => s.maxCrashes));
  const letters = new Map(final.deadLetters.map((d) => [d.jobId, d]));
  const doomed = new Set(bounds.doomedKinds);
  const bad: { jobId: number; why: string; [k: string]: unknown }[] = [];
  let judged = 0;
  let exhausted = 0;
  let convicted = 0;
  let unbudgeted = 0;
  // Finished jobs with a deferral (a claim handed back uncharged because another holder's transaction held its
  // effect) followed by a later claim: the claims whose attempt number a charged deferral would push up.
  let deferredJudged = 0;
  for (const job of final.jobs) {
    if (job.state !== 'done' && job.state !== 'dead') continue;
    if (job.maxAttempts === undefined || job.errorCount === undefined) {
      unbudgeted++;
      continue;
    }
    judged++;
    const max = job.maxAttempts;
    const say = (why: string, x: Record<string, unknown> = {}) => bad.push({ jobId: job.id, why, attempts: job.attempts, maxAttempts: max, ...x });
    const life = lives.get(job.id);
    const holds = life?.holds ?? [];
    // A claim whose report died with its process (SIGKILLed just after claiming) still shows as the rescue of
    // a lease nobody was seen to take: each such rescue excuses one attempt number skipped.
    let unseen = (life?.rescues ?? []).filter((r) => !holds.some((h) => h.rescued === r)).length;
    if (holds.some((h, i) => h.deferred && i < holds.length - 1)) deferredJudged++;
    let expected = 0;
    for (const h of holds) {
      const next = expected + 1;
      const skipped = h.claim.attempt === next + 1 && unseen > 0;
      if (skipped) unseen--;
      if (h.claim.attempt !== next && !skipped) say(`claimed as attempt ${h.claim.attempt}, expected ${next}`, { workerId: h.claim.workerId });
      if (h.claim.attempt > max) say(`claimed as attempt ${h.claim.attempt}, over its budget`, { workerId: h.claim.workerId });
      expected = h.released || h.deferred ? h.claim.attempt - 1 : h.claim.attempt;
    }
    // Rescues of claims never seen that are left over account for attempts after the last claim seen.
    if (holds.length && (job.attempts < expected || job.attempts > expected + unseen)) say(`row shows ${job.attempts} attempts, its claims charged ${expected}`);
    if (job.attempts > max) say('more attempts than its budget');
    const errorsWanted = job.state === 'done' ? job.attempts - 1 : job.attempts;
    if (job.errorCount !== errorsWanted) say(`${job.errorCount} error entries, expected ${errorsWanted}`, { state: job.state });
    if (job.state === 'dead') {
      const dl = letters.get(job.id);
      if (!dl) say('dead with no dead-letter row');
      else if ((dl.attempts !== undefined && dl.attempts !== job.attempts) || (dl.errorCount !== undefined && dl.errorCount !== job.errorCount)) {
        say('dead-letter row disagrees with the job', { letterAttempts: dl.attempts, letterErrors: dl.errorCount, errors: job.errorCount });
      }
      if (job.attempts >= max) exhausted++;
      else if (dl && convictedAsCrashLoop(dl) && (!(maxCrashes >= 0) || (job.crashCount ?? 0) >= maxCrashes)) convicted++;
      else say('dead before its budget, not convicted as a crash loop', { reason: dl?.reason, crashCount: job.crashCount, maxCrashes });
    } else if (job.attempts > max) {
      say('done after more attempts than its budget');
    }
    if (doomed.has(idx.kindOf(job.id) ?? '') && !(job.state === 'dead' && job.attempts === max)) say('a doomed job did not end dead at its budget', { state: job.state });
  }
  // A used-up budget on an unfinished row is as wrong as on a finished one: nothing will ever claim it.
  for (const job of final.jobs) {
    if ((job.state === 'failed' || job.state === 'pending') && job.maxAttempts !== undefined && job.attempts >= job.maxAttempts) {
      bad.push({ jobId: job.id, why: `${job.state} with its whole budget used: never claimable again, never dead`, attempts: job.attempts, maxAttempts: job.maxAttempts });
    }
  }
  const base = {
    name: 'attempt-accounting',
    bound: `attempts charged once per claim, within budget; exhausted => dead with as many errors and a dead-letter row; >= ${fmt(bounds.minExhausted)} exhausted`,
    judged: { n: judged, what: 'finished jobs with an attempt budget' },
    figure:
      `${fmt(bad.length)} accounting errors over ${fmt(judged)} finished jobs; ${fmt(exhausted)} exhausted their budget and are dead, ` +
      `${fmt(convicted)} convicted as crash loops` +
      (deferredJudged ? `; ${fmt(deferredJudged)} deferred and claimed again` : ''),
  };
  if (bad.length) return { ...base, pass: false, examples: firstN(bad) };
  if (unbudgeted && judged === 0) return { ...base, pass: 'unknown', figure: `${base.figure}; the final state has no attempt budgets (a run stored before they were read)` };
  if (exhausted < bounds.minExhausted) return { ...base, pass: 'unknown', figure: `${base.figure}; fewer than ${fmt(bounds.minExhausted)} exhausted, so exhaustion was not shown` };
  return { ...base, pass: true };
}

export const attemptAccounting: CheckerDef<AttemptAccountingBounds> = {
  name: 'attempt-accounting',
  says: 'attempts are charged once per claim and within budget; a job out of budget is dead with that many attempts and errors and its dead-letter row; never dead early unless convicted',
  check: checkAttemptAccounting,
  bounds: { doomedKinds: 'string[]', minExhausted: 'number' },
  defaults: { doomedKinds: ['failing'], minExhausted: 1 },
};
