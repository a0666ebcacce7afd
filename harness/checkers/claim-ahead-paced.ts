import { AHEAD_CAP, AHEAD_WAIT_MS, HANDLER_MEAN_WEIGHT } from '../../engine/worker/claim-ahead.ts';
import type { EventOf, FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { Fleetline } from './lives.ts';
import { firstN, fmt, maxOf, percentile, type CheckerDef } from './types.ts';

export interface ClaimAheadPacedBounds {
  /** Slots per worker (the scenario's `concurrency`); the default buffer is as large (claimAhead unset). */
  concurrency: number;
  /**
   * How far the paced size may exceed `concurrency x 100 ms / mean`, as a factor: the history's mean is the
   * engine's as of each claim, rebuilt from when each handler ended on the worker's clock (its start plus its
   * duration, both ms), and the engine sizes a claim's buffer as the claim before it returned. Default 2.
   */
  paceSlack: number;
  /** A job at a place only a grown buffer gives must start this long after its first renewal was due at the latest, ms. Default 1,000. */
  waitSlackMs: number;
  /** The run must show the buffer grown (a job waited behind more starts than the default buffer holds). Default false. */
  mustGrow: boolean;
}

type Claimed = EventOf<'job:claimed'> & { dbTime: number };

interface Breach {
  kind: 'cap' | 'growth' | 'pace' | 'first-renewal';
  workerId: string;
  claimSize?: number;
  previousClaim?: number;
  jobId?: number;
  startsAhead?: number;
  allowed: number;
  waitedMs?: number;
  meanHandlerMs?: number;
}

/** One worker's claims and starts, in the order it reported them. */
interface WorkerLine {
  heartbeatMs: number;
  /** The handlers' mean as the engine keeps it (claim-ahead.ts's HANDLER_MEAN_WEIGHT), NaN before the first outcome. */
  meanMs: number;
  /** The worker's handlers' ends (worker clock) and durations, in order of their end; `ended` of them are in meanMs. */
  ends: { at: number; ms: number }[];
  ended: number;
  /** The buffer the engine allows the next claim (`paceSlack` x the pace at the mean as the last claim returned). */
  paced: number;
  starts: number;
  /** The claim under way: its database instant and its jobs so far. */
  claim: { dbTime: number; n: number; allowed: number } | null;
  previousClaim: number;
  /** Each job claimed and not yet started: the starts counted at its claim, its claim's allowance, its node time. */
  waiting: Map<string, { starts: number; allowed: number; nodeTime?: number; node: string; t: number; jobId: number }>;
}

/**
 * A claim-ahead buffer left at its default grows while the queue is backed up, within its bounds
 * (docs/configuration.md, `claimAhead`: "grows after a full claim to what the slots run in about 100 ms at the
 * handlers' mean duration (at most 500), and shrinks when a job waited in it over half a heartbeat period").
 * What the history shows of a worker's buffer, claim by claim (a claim is its `job:claimed` events sharing one
 * database instant; a suspect, claimed alone, is not one):
 * - cap: a claim takes at most concurrency + 500 jobs;
 * - growth: the buffer at most doubles a claim, and a claim is sent only once it is half spent, so a claim takes
 *   at most concurrency + max(concurrency, 4 x the claim before);
 * - pace: a job waits for a slot behind the jobs claimed before it, in order, so the starts of that worker between
 *   its claim and its own start are fewer than the buffer it was claimed into; that buffer is at most what the slots
 *   run in 100 ms at the handlers' mean (`paceSlack` x concurrency x 100 / mean, and never below concurrency),
 *   with the mean kept as the engine keeps it from the durations the history recorded, or the size an earlier
 *   claim whose jobs still wait was allowed (a buffer that shrinks as the mean grows evicts nothing). Slow
 *   handlers keep the buffer at concurrency: a job waits behind fewer than concurrency starts;
 * - first renewal: a job at a place only a grown buffer gives (behind concurrency starts or more) starts before its
 *   first renewal is due (heartbeatMs after its claim, on the worker's clock, + `waitSlackMs`): what the shrink at
 *   half a heartbeat period keeps. Waits across a freeze of the worker are not judged.
 * Workers with a queue without heartbeats (no claim-ahead) are left out. Judged: the jobs claimed and started;
 * unknown with none.
 */
export function checkClaimAheadPaced(history: readonly HistoryEvent[], _final: FinalState, bounds: ClaimAheadPacedBounds): InvariantResult {
  const fleet = new Fleetline(history);
  const handlerEnds = endsOfHandlers(history);
  const base = bounds.concurrency;
  const lines = new Map<string, WorkerLine>();
  const breaches: Breach[] = [];
  const waits: number[] = [];
  let judged = 0;
  let grown = 0;
  let claims = 0;
  let largestAhead = 0;
  let largestClaim = 0;

  const lineOf = (workerId: string): WorkerLine | undefined => {
    let line = lines.get(workerId);
    if (line) return line;
    const beats = Object.values(fleet.settingsOf(workerId)?.queues ?? {}).map((q) => q.heartbeatMs);
    if (beats.length === 0 || beats.some((ms) => !(ms > 0))) return undefined;
    line = { heartbeatMs: Math.min(...beats), meanMs: Number.NaN, ends: handlerEnds.get(workerId) ?? [], ended: 0, paced: base, starts: 0, claim: null, previousClaim: 0, waiting: new Map() };
    lines.set(workerId, line);
    return line;
  };
  const endClaim = (line: WorkerLine, workerId: string): void => {
    const c = line.claim;
    if (!c) return;
    claims++;
    largestClaim = Math.max(largestClaim, c.n);
    if (c.n > base + AHEAD_CAP) breaches.push({ kind: 'cap', workerId, claimSize: c.n, allowed: base + AHEAD_CAP });
    const grownTo = base + Math.max(base, Math.min(AHEAD_CAP, 4 * line.previousClaim));
    if (line.previousClaim > 0 && c.n > grownTo) breaches.push({ kind: 'growth', workerId, claimSize: c.n, previousClaim: line.previousClaim, allowed: grownTo });
    line.previousClaim = c.n;
    line.claim = null;
  };

  for (const e of history) {
    if (e.type === 'job:claimed') {
      const c = e as Claimed;
      if (c.dbTime === undefined || (c.crashCount ?? 0) > 0) continue;
      const line = lineOf(c.workerId);
      if (!line) continue;
      if (line.claim && line.claim.dbTime !== c.dbTime) endClaim(line, c.workerId);
      if (!line.claim) {
        // The engine sized this claim's buffer when the claim before it returned, at the mean it had then (paced);
        // the buffer may still hold jobs an earlier claim put there under a larger size (the mean has grown since:
        // a shrunk buffer evicts nothing), and this claim's jobs wait behind them.
        const inherited = Math.max(0, ...[...line.waiting.values()].map((w) => w.allowed));
        line.claim = { dbTime: c.dbTime, n: 0, allowed: Math.max(base, Math.min(AHEAD_CAP, line.paced), inherited) };
        // The mean the engine has as this claim returns (its jobs' claimed events are emitted then): every handler that
        // had ended on the worker's clock by then. It sizes the next claim's buffer.
        while (c.nodeTime !== undefined && line.ended < line.ends.length && line.ends[line.ended].at <= c.nodeTime) addToMean(line, line.ends[line.ended++].ms);
        line.paced = Number.isNaN(line.meanMs) ? base : Math.floor((bounds.paceSlack * base * AHEAD_WAIT_MS) / Math.max(line.meanMs, 1));
      }
      line.claim.n++;
      line.waiting.set(`${c.jobId}/${c.attempt}`, { starts: line.starts, allowed: line.claim.allowed, nodeTime: c.nodeTime, node: c.node, t: c.t, jobId: c.jobId });
    } else if (e.type === 'job:started') {
      const line = lines.get(e.workerId);
      if (!line) continue;
      const key = `${e.jobId}/${e.attempt}`;
      const w = line.waiting.get(key);
      line.starts++;
      if (!w) continue;
      line.waiting.delete(key);
      judged++;
      const ahead = line.starts - 1 - w.starts;
      largestAhead = Math.max(largestAhead, ahead);
      if (ahead >= w.allowed) {
        breaches.push({ kind: 'pace', workerId: e.workerId, jobId: e.jobId, startsAhead: ahead, allowed: w.allowed - 1, meanHandlerMs: Math.round(line.meanMs) });
      }
      if (ahead < base || w.nodeTime === undefined || e.nodeTime === undefined) continue;
      grown++;
      const waitedMs = e.nodeTime - w.nodeTime;
      waits.push(waitedMs);
      const allowedMs = line.heartbeatMs + bounds.waitSlackMs;
      if (waitedMs > allowedMs && !fleet.frozenBetween(w.node, w.t, e.t)) {
        breaches.push({ kind: 'first-renewal', workerId: e.workerId, jobId: e.jobId, startsAhead: ahead, waitedMs, allowed: allowedMs });
      }
    } else if ((e.type === 'job:completed' || e.type === 'job:failed') && !handlerEnds.has(e.workerId)) {
      // A history without node times: the outcomes in the order they were recorded, a claim or two late.
      const line = lines.get(e.workerId);
      const ms = e.durationMs;
      if (!line || ms === undefined || !Number.isFinite(ms)) continue;
      addToMean(line, ms);
    }
  }
  for (const [workerId, line] of lines) endClaim(line, workerId);

  const notGrown = bounds.mustGrow && judged > 0 && grown === 0;
  const byKind = new Map<Breach['kind'], number>();
  for (const b of breaches) byKind.set(b.kind, (byKind.get(b.kind) ?? 0) + 1);
  const kinds = byKind.size ? ` (${[...byKind].map(([k, n]) => `${k} ${fmt(n)}`).join(', ')})` : '';
  const waitFigure = waits.length ? `; those waited median ${fmt(percentile(waits, 50))} ms, p99 ${fmt(percentile(waits, 99))} ms, max ${fmt(maxOf(waits))} ms` : '';
  return {
    name: 'claim-ahead-paced',
    pass: breaches.length > 0 || notGrown ? false : judged > 0 ? true : 'unknown',
    figure:
      `${fmt(breaches.length)} breaches${kinds} over ${fmt(claims)} claims and ${fmt(judged)} jobs claimed; ${fmt(grown)} waited behind ${fmt(base)} starts or more ` +
      `(a grown buffer), the most behind ${fmt(largestAhead)}; claims of up to ${fmt(largestClaim)} jobs${waitFigure}`,
    bound:
      `claims <= ${fmt(base)} + ${fmt(AHEAD_CAP)} and <= ${fmt(base)} + max(${fmt(base)}, 4 x the claim before); a job behind fewer starts than ` +
      `max(${fmt(base)}, ${bounds.paceSlack} x ${fmt(base)} x ${AHEAD_WAIT_MS} ms / mean handler); one behind ${fmt(base)} or more started within heartbeatMs + ${fmt(bounds.waitSlackMs)} ms` +
      (bounds.mustGrow ? '; the buffer grew' : ''),
    judged: { n: judged, what: 'jobs claimed and started, each judged by its place in the buffer' },
    ...(breaches.length ? { examples: firstN(breaches) } : notGrown ? { examples: [`no job waited behind ${base} starts: the buffer never grew`] } : {}),
  };
}

function addToMean(line: WorkerLine, ms: number): void {
  line.meanMs = Number.isNaN(line.meanMs) ? ms : line.meanMs + (ms - line.meanMs) * HANDLER_MEAN_WEIGHT;
}

/**
 * Each worker's handler ends on its own clock (the attempt's job:started node time plus the outcome's durationMs), in
 * order of their end: the engine updates its mean when a handler returns, before the outcome is recorded and
 * reported, so the history's order of outcomes lags it. Workers whose events carry no node time are left out.
 */
function endsOfHandlers(history: readonly HistoryEvent[]): Map<string, { at: number; ms: number }[]> {
  const startedAt = new Map<string, number>();
  const ends = new Map<string, { at: number; ms: number }[]>();
  for (const e of history) {
    if (e.type === 'job:started' && e.nodeTime !== undefined) startedAt.set(`${e.workerId}/${e.jobId}/${e.attempt}`, e.nodeTime);
    if ((e.type === 'job:completed' || e.type === 'job:failed') && e.durationMs !== undefined && Number.isFinite(e.durationMs)) {
      const at = startedAt.get(`${e.workerId}/${e.jobId}/${e.attempt}`);
      if (at === undefined) continue;
      const list = ends.get(e.workerId) ?? [];
      ends.set(e.workerId, list);
      list.push({ at: at + e.durationMs, ms: e.durationMs });
    }
  }
  for (const list of ends.values()) list.sort((a, b) => a.at - b.at);
  return ends;
}

export const claimAheadPaced: CheckerDef<ClaimAheadPacedBounds> = {
  name: 'claim-ahead-paced',
  says: 'a claim-ahead buffer left at its default grows at most twofold a claim, to at most 500 and what the slots run in about 100 ms at the handlers\' mean, and its jobs start before their first renewal',
  check: checkClaimAheadPaced,
  bounds: { concurrency: 'number', paceSlack: 'number', waitSlackMs: 'number', mustGrow: 'boolean' },
  defaults: { concurrency: 10, paceSlack: 2, waitSlackMs: 1_000, mustGrow: false },
};
