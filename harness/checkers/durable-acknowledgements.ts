import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export type DurableAcknowledgementsBounds = Record<string, never>;

const seqOf = (e: HistoryEvent) => (e as { detail?: { seq?: unknown } }).detail?.seq;

/**
 * Each real crash of Postgres injected: when (harness `t`), when the server was
 * back (its closing marker), and whether its evidence shows it happened.
 */
function crashes(history: readonly HistoryEvent[]): { t: number; backT: number; shown: boolean }[] {
  const shown = new Set(history.filter((e) => e.type === 'fault:evidence' && e.fault === 'db-restart').map(seqOf));
  const isRestart = (e: HistoryEvent) => e.type === 'fault:injected' && e.fault === 'db-restart';
  return history
    .filter((e) => isRestart(e) && e.type === 'fault:injected' && e.detail.mode === 'crash')
    .map((e) => {
      const back = history.find((b) => isRestart(b) && b.type === 'fault:injected' && b.detail.phase === 'end' && seqOf(b) === seqOf(e));
      return { t: e.t, backT: back?.t ?? e.t, shown: shown.has(seqOf(e)) };
    });
}

/**
 * Durability across a real crash of Postgres (the postmaster SIGKILLed
 * mid-load, then crash recovery): what the database acknowledged before the
 * crash is still there after it.
 *
 * "Before the crash" is before the server was back: a backend orphaned by
 * the SIGKILL may still acknowledge a commit in the moment before it
 * notices, and that acknowledgement binds it too.
 *
 * - an acknowledged enqueue (`enqueue:ok`: the INSERT's COMMIT returned)
 *   before the crash has its row in the final state;
 * - an acknowledged completion (`job:completed`: the completing COMMIT
 *   returned to the worker) before the crash is not undone: the row ends
 *   `done`, and the job is never claimed or rescued again after it (a
 *   completion the crash lost puts the job back to run a second time).
 *
 * - an acknowledged claim (`job:claimed`: the claim's COMMIT returned and
 *   charged the attempt) is not undone: the job is never claimed again with
 *   the same or a lower attempt number (the crash rolled the charge back),
 *   unless the worker handed that claim back uncharged (`job:deferred`).
 *
 * Unknown when the run injected no crash, the crash showed no evidence that it
 * happened, or nothing was acknowledged before it.
 */
export function checkDurableAcknowledgements(history: readonly HistoryEvent[], final: FinalState): InvariantResult {
  const base = { name: 'durable-acknowledgements', bound: '0 acknowledged enqueues lost, 0 acknowledged completions or claims undone by the crash' };
  const what = 'acknowledgements before the crash (enqueues, claims, completions)';
  const all = crashes(history);
  if (all.length === 0) return { ...base, pass: 'unknown', figure: 'no Postgres crash injected: nothing to judge', judged: { n: 0, what } };
  if (!all.every((c) => c.shown)) return { ...base, pass: 'unknown', figure: `${fmt(all.length)} crash(es) injected, not all shown to have happened`, judged: { n: 0, what } };
  const crashT = Math.max(...all.map((c) => c.t));
  const backT = Math.max(...all.map((c) => c.backT));
  const byId = new Map(final.jobs.map((j) => [j.id, j]));
  const lost: { jobId: number; ackedAtMs: number }[] = [];
  const undone: { jobId: number; completedAtMs: number; state?: string; againAtMs?: number }[] = [];
  const claimsUndone: { jobId: number; attempt: number; claimedAtMs: number; againAtMs: number }[] = [];
  let enqueues = 0;
  let completions = 0;
  let claims = 0;
  const laterClaims = new Map<number, { t: number; attempt: number }[]>();
  const deferred = new Map<number, number[]>();
  for (const e of history) {
    if (e.type === 'job:claimed') laterClaims.set(e.jobId, [...(laterClaims.get(e.jobId) ?? []), { t: e.t, attempt: e.attempt }]);
    if (e.type === 'job:deferred') deferred.set(e.jobId, [...(deferred.get(e.jobId) ?? []), e.t]);
  }
  const lastTouch = new Map<number, number>();
  for (const e of history) if (e.type === 'job:claimed' || e.type === 'lease:rescued') lastTouch.set(e.jobId, e.t);
  for (const e of history) {
    if (e.t >= backT) continue;
    if (e.type === 'enqueue:ok') {
      enqueues++;
      if (!byId.has(e.jobId)) lost.push({ jobId: e.jobId, ackedAtMs: e.t });
    } else if (e.type === 'job:claimed') {
      claims++;
      const again = laterClaims.get(e.jobId)!.find((c) => c.t > e.t && c.attempt <= e.attempt);
      const handedBack = again && (deferred.get(e.jobId) ?? []).some((t) => t >= e.t && t <= again.t);
      if (again && !handedBack) claimsUndone.push({ jobId: e.jobId, attempt: e.attempt, claimedAtMs: e.t, againAtMs: again.t });
    } else if (e.type === 'job:completed') {
      completions++;
      const row = byId.get(e.jobId);
      const again = lastTouch.get(e.jobId);
      if (row?.state !== 'done' || (again !== undefined && again > e.t)) {
        undone.push({ jobId: e.jobId, completedAtMs: e.t, state: row?.state ?? 'absent', ...(again !== undefined && again > e.t ? { againAtMs: again } : {}) });
      }
    }
  }
  const figure =
    `crash at ${fmt(crashT)} ms, back at ${fmt(backT)} ms: ${fmt(enqueues - lost.length)} of ${fmt(enqueues)} acknowledged enqueues and ` +
    `${fmt(completions - undone.length)} of ${fmt(completions)} acknowledged completions and ` +
    `${fmt(claims - claimsUndone.length)} of ${fmt(claims)} acknowledged claims survived`;
  const examples = [
    ...firstN(lost).map((l) => ({ lostEnqueue: l })),
    ...firstN(undone).map((u) => ({ undoneCompletion: u })),
    ...firstN(claimsUndone).map((c) => ({ undoneClaim: c })),
  ];
  return {
    ...base,
    pass: lost.length + undone.length + claimsUndone.length > 0 ? false : enqueues + completions === 0 ? 'unknown' : true,
    figure,
    judged: { n: enqueues + claims + completions, what },
    ...(examples.length ? { examples } : {}),
  };
}

export const durableAcknowledgements: CheckerDef<DurableAcknowledgementsBounds> = {
  name: 'durable-acknowledgements',
  says: 'every enqueue, claim and completion acknowledged before a real Postgres crash survives it (row present; claim and completion not undone)',
  check: checkDurableAcknowledgements,
  bounds: {},
  defaults: {},
};
