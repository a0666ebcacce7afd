import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { cuts, cutWindows, holdsOf, type Hold } from './fault-windows.ts';
import { hostAheadOfDb } from './lives.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface HandlerAbortedBounds {
  /** How far after the new holder's claim the old holder's abort may be recorded, ms (two processes' reports crossing). */
  slackMs: number;
}

/**
 * A worker cut off from the database (a partition, a database-host fault)
 * stops its handler before its lease can have ended, and so before anyone
 * else is given the job. For every hold a cut window overlapped, the
 * handler stopped (the hold ended: completed, failed, handed back; or it was
 * aborted: `lease:lost`, phase `expired` or `heartbeat`; or it had settled:
 * phase `complete`/`fail`, a refused write of a handler that returned, at
 * job:started + handlerMs; or it was inside its effect's transaction, whose
 * fence then refused it; or it never started: a claim answered after its
 * lease may have ended is given up unrun; or its process died) no later than slackMs after
 *
 * - the end of its lease on the database's clock, as the claim and the
 *   renewals the holder had heard of by then set it (database times placed
 *   on the harness's clock by the smallest gap between an event's host
 *   time and its database time: one host, one clock), and
 * - the claim of the job by its next holder, if any.
 *
 * Unknown with no hold overlapping a cut.
 */
export function checkHandlerAborted(history: readonly HistoryEvent[], _final: FinalState, bounds: HandlerAbortedBounds): InvariantResult {
  const windows = cutWindows(history);
  const holds = holdsOf(history);
  const of = holdFacts(history, holds);
  const exits = new Map<string, number[]>();
  const offset = hostAheadOfDb(history);
  for (const e of history) {
    if (e.type === 'process:exited') (exits.get(e.node) ?? exits.set(e.node, []).get(e.node)!).push(e.t);
  }
  const late: unknown[] = [];
  const how: Record<string, number> = { ended: 0, aborted: 0, settled: 0, fenced: 0, 'never started': 0, died: 0 };
  let judged = 0;
  for (const [i, h] of holds.entries()) {
    if (!windows.some((w) => cuts(w, h.node) && w.fromT < h.endT && w.toT > h.claimT)) continue;
    judged++;
    const facts = of.get(h)!;
    const stop = stoppedAt(h, facts, exits);
    const heard = facts.leaseEnds.filter((l) => l.t <= stop.t);
    const leaseEndT = heard.length ? Math.max(...heard.map((l) => l.endDb)) + offset : Number.POSITIVE_INFINITY;
    const next = holds.slice(i + 1).find((o) => o.jobId === h.jobId);
    const limitT = Math.min(leaseEndT, next?.claimT ?? Number.POSITIVE_INFINITY) + bounds.slackMs;
    if (stop.t <= limitT) {
      how[stop.kind]++;
      continue;
    }
    late.push({
      jobId: h.jobId,
      heldBy: h.node,
      attempt: h.attempt,
      stoppedAtT: Number.isFinite(stop.t) ? stop.t : 'never',
      how: stop.kind,
      leaseEndedAtT: Number.isFinite(leaseEndT) ? Math.round(leaseEndT) : null,
      ...(next ? { takenBy: next.node, takenAtT: next.claimT } : {}),
    });
  }
  const figure = `${fmt(late.length)} of ${fmt(judged)} holds of a cut-off worker whose handler ran past its lease or its takeover; stopped in time: ${Object.entries(how).map(([k, v]) => `${fmt(v)} ${k}`).join(', ')}`;
  const base = { name: 'handler-aborted-on-lease-loss', figure, bound: `handler stopped by its lease's end and before a new holder's claim (+${fmt(bounds.slackMs)} ms)`, judged: { n: judged, what: 'holds of a cut-off worker' } };
  if (late.length) return { ...base, pass: false, examples: firstN(late) };
  return { ...base, pass: judged > 0 ? true : 'unknown' };
}

/** What the holder reported of one hold: when its handler started, when its effect did, the lease ends it heard. */
interface HoldFacts {
  startT?: number;
  effectT?: number;
  leaseEnds: { t: number; endDb: number }[];
}

/**
 * Each hold's own reports. A job's attempt number is not a hold's name: a claim given up unrun (answered after its
 * lease may have ended) hands the job back uncharged, and the same worker may claim the same attempt again at once,
 * so a report belongs to the hold of its job, attempt and node that was open when it was made, the latest claim's.
 */
function holdFacts(history: readonly HistoryEvent[], holds: readonly Hold[]): Map<Hold, HoldFacts> {
  const facts = new Map<Hold, HoldFacts>(holds.map((h) => [h, { leaseEnds: [] }]));
  const open = new Map<string, HoldFacts>();
  let next = 0;
  for (const e of history) {
    if (e.type !== 'job:claimed' && e.type !== 'lease:renewed' && e.type !== 'job:started' && e.type !== 'effect:started') continue;
    const k = `${e.jobId}:${e.attempt}:${e.node}`;
    // holdsOf opens one hold per job:claimed, in history order: the next one is this claim's.
    if (e.type === 'job:claimed') open.set(k, facts.get(holds[next++])!);
    const f = open.get(k);
    if (!f) continue;
    if (e.type === 'job:started') f.startT = e.t;
    else if (e.type === 'effect:started') f.effectT = e.t;
    else if (e.leaseExpiresAt !== undefined) f.leaseEnds.push({ t: e.t, endDb: e.leaseExpiresAt });
  }
  return facts;
}

/** When the old holder's handler stopped, by the best account the history gives, and how. */
function stoppedAt(h: Hold, facts: HoldFacts, exits: Map<string, number[]>): { t: number; kind: string } {
  const died = (exits.get(h.node) ?? []).find((t) => t >= h.claimT) ?? Number.POSITIVE_INFINITY;
  const e = h.end;
  // Inside its effect's transaction the handler can change nothing but through it, and the transaction is fenced: on
  // the lease token, by the job row's lock once it completed the job in it (a rescue skips a locked row), and by the
  // key's lock against a new holder's effect. Whatever ended it (its commit, a refused write, a hand-back), the job
  // was out of the handler's hands from the moment it asked, which must still be within its lease.
  const effectT = facts.effectT;
  const started = facts.startT;
  // Given up before its handler was called (a claim answered after the lease may have ended): it never ran.
  if (e !== undefined && started === undefined && died > e.t) return { t: Number.NEGATIVE_INFINITY, kind: 'never started' };
  if (effectT !== undefined && e !== undefined) return { t: Math.min(effectT, died), kind: 'fenced' };
  let t = Number.POSITIVE_INFINITY;
  let kind = 'died';
  if (e?.type === 'lease:lost') {
    const handlerMs = (e as { handlerMs?: number }).handlerMs;
    if ((e.phase === 'expired' || e.phase === 'heartbeat') && handlerMs === undefined) [t, kind] = [e.t, 'aborted'];
    // The handler had returned before the loss was found (a refused write, or a renewal its outcome waited for): handlerMs after it started (or it never started).
    else if (started === undefined) [t, kind] = [h.claimT, 'settled'];
    else if (handlerMs !== undefined) [t, kind] = [started + handlerMs, 'settled'];
    else [t, kind] = [e.t, 'settled'];
  } else if (e) {
    // Completed or failed: the handler had returned durationMs after it started (the write may have landed later).
    const durationMs = (e as { durationMs?: number }).durationMs;
    [t, kind] = [started !== undefined && durationMs !== undefined ? started + durationMs : e.t, 'ended'];
  }
  return died < t ? { t: died, kind: 'died' } : { t, kind };
}

export const handlerAbortedOnLeaseLoss: CheckerDef<HandlerAbortedBounds> = {
  name: 'handler-aborted-on-lease-loss',
  says: "a worker cut off from the database aborts its handler (lease:lost) before another worker is given the job",
  check: checkHandlerAborted,
  bounds: { slackMs: 'number' },
  defaults: { slackMs: 250 },
};
