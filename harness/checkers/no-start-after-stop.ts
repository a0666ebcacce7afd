import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export type NoStartAfterStopBounds = Record<string, never>;

/**
 * A stopping worker hands back its claimed-ahead jobs rather than starting
 * them (docs/configuration.md, `claimAhead`: "handed back at stop"). From its
 * own `worker:stopping` on (its reports arrive in the order it made them, so
 * history order within one worker is its order), a worker reports no
 * `job:started`: the jobs still waiting for a slot, and any a claim under way
 * at the stop returned, go back uncharged (`hand-back` judges how). Judged:
 * the jobs a worker held unstarted at its stop or claimed after it; unknown
 * with none (a stop that found nothing waiting says nothing about them).
 */
export function checkNoStartAfterStop(history: readonly HistoryEvent[], _final: FinalState): InvariantResult {
  const stoppedAt = new Map<string, number>();
  const waiting = new Map<string, Set<number>>();
  const held = (workerId: string) => waiting.get(workerId) ?? waiting.set(workerId, new Set()).get(workerId)!;
  const started: unknown[] = [];
  let judged = 0;
  history.forEach((e, i) => {
    if (e.type === 'worker:stopping' && !stoppedAt.has(e.workerId)) {
      stoppedAt.set(e.workerId, i);
      judged += held(e.workerId).size;
    } else if (e.type === 'job:claimed') {
      held(e.workerId).add(e.jobId);
      if (stoppedAt.has(e.workerId)) judged++;
    } else if (e.type === 'job:started') {
      held(e.workerId).delete(e.jobId);
      if (stoppedAt.has(e.workerId)) started.push({ jobId: e.jobId, attempt: e.attempt, workerId: e.workerId, t: e.t });
    } else if ((e.type === 'lease:released' || e.type === 'job:deferred' || e.type === 'lease:lost') && !stoppedAt.has(e.workerId)) {
      held(e.workerId).delete(e.jobId);
    }
  });
  return {
    name: 'no-start-after-stop',
    pass: started.length > 0 ? false : judged > 0 ? true : 'unknown',
    figure: `${fmt(started.length)} jobs started after their worker began to stop; ${fmt(judged)} jobs held unstarted at ${fmt(stoppedAt.size)} stops (claimed ahead, or returned by a claim under way)`,
    bound: '0 started after worker:stopping',
    judged: { n: judged, what: 'jobs a stopping worker held unstarted' },
    ...(started.length ? { examples: firstN(started) } : {}),
  };
}

export const noStartAfterStop: CheckerDef<NoStartAfterStopBounds> = {
  name: 'no-start-after-stop',
  says: 'a worker told to stop starts none of the jobs it claimed ahead (it hands them back)',
  check: checkNoStartAfterStop,
  bounds: {},
  defaults: {},
};
