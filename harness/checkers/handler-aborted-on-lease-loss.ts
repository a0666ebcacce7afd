import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { cuts, cutWindows, holdsOf, type Hold } from './fault-windows.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface HandlerAbortedBounds {
  /** How far after the new holder's claim the old holder's abort may be recorded, ms (two processes' reports crossing). */
  slackMs: number;
}

/**
 * A worker cut off from the database (a partition, a database-host fault)
 * stops its handler before anyone else is given the job: for every job taken
 * over (claimed by another worker or a later attempt) from a holder that a
 * cut window overlapped, the old holder had ended its hold before the new
 * claim (completed, failed, handed back), or its handler was aborted by then
 * (`lease:lost`, phase `expired` or `heartbeat`), or it had settled by then
 * (phase `complete`/`fail`: a refused write of a handler that returned, at
 * job:started + handlerMs), or its process had died by then, each up to
 * slackMs after the new claim. Unknown with no such takeover.
 */
export function checkHandlerAborted(history: readonly HistoryEvent[], _final: FinalState, bounds: HandlerAbortedBounds): InvariantResult {
  const windows = cutWindows(history);
  const holds = holdsOf(history);
  const starts = new Map<string, number>();
  const exits = new Map<string, number[]>();
  for (const e of history) {
    if (e.type === 'job:started') starts.set(`${e.jobId}:${e.attempt}:${e.node}`, e.t);
    if (e.type === 'process:exited') (exits.get(e.node) ?? exits.set(e.node, []).get(e.node)!).push(e.t);
  }
  const late: unknown[] = [];
  const how: Record<string, number> = { ended: 0, aborted: 0, settled: 0, died: 0 };
  let judged = 0;
  for (const [i, h] of holds.entries()) {
    const next = holds.slice(i + 1).find((o) => o.jobId === h.jobId);
    if (!next) continue;
    if (!windows.some((w) => cuts(w, h.node) && w.fromT < Math.min(h.endT, next.claimT) && w.toT > h.claimT)) continue;
    judged++;
    const stopT = stoppedAt(h, starts, exits);
    const kind = stopT.kind;
    if (stopT.t <= next.claimT + bounds.slackMs) {
      how[kind]++;
      continue;
    }
    late.push({ jobId: h.jobId, heldBy: h.node, attempt: h.attempt, takenBy: next.node, takenAtT: next.claimT, stoppedAtT: Number.isFinite(stopT.t) ? stopT.t : 'never', how: kind });
  }
  const figure = `${fmt(late.length)} of ${fmt(judged)} takeovers from a cut-off holder with its handler still running; stopped in time: ${Object.entries(how).map(([k, v]) => `${fmt(v)} ${k}`).join(', ')}`;
  const base = { name: 'handler-aborted-on-lease-loss', figure, bound: `handler stopped before the new holder's claim (+${fmt(bounds.slackMs)} ms)`, judged: { n: judged, what: 'takeovers from a cut-off holder' } };
  if (late.length) return { ...base, pass: false, examples: firstN(late) };
  return { ...base, pass: judged > 0 ? true : 'unknown' };
}

/** When the old holder's handler stopped, by the best account the history gives, and how. */
function stoppedAt(h: Hold, starts: Map<string, number>, exits: Map<string, number[]>): { t: number; kind: string } {
  const died = (exits.get(h.node) ?? []).find((t) => t >= h.claimT) ?? Number.POSITIVE_INFINITY;
  const e = h.end;
  let t = Number.POSITIVE_INFINITY;
  let kind = 'died';
  if (e?.type === 'lease:lost') {
    const handlerMs = (e as { handlerMs?: number }).handlerMs;
    const started = starts.get(`${h.jobId}:${h.attempt}:${h.node}`);
    if (e.phase === 'expired' || e.phase === 'heartbeat') [t, kind] = [e.t, 'aborted'];
    // A refused result write: the handler had returned when it was written, handlerMs after it started (or never started).
    else if (started === undefined) [t, kind] = [h.claimT, 'settled'];
    else if (handlerMs !== undefined) [t, kind] = [started + handlerMs, 'settled'];
    else [t, kind] = [e.t, 'settled'];
  } else if (e) [t, kind] = [e.t, 'ended'];
  return died < t ? { t: died, kind: 'died' } : { t, kind };
}

export const handlerAbortedOnLeaseLoss: CheckerDef<HandlerAbortedBounds> = {
  name: 'handler-aborted-on-lease-loss',
  says: "a worker cut off from the database aborts its handler (lease:lost) before another worker is given the job",
  check: checkHandlerAborted,
  bounds: { slackMs: 'number' },
  defaults: { slackMs: 250 },
};
