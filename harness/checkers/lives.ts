import { cuts, cutWindows, type CutWindow } from './fault-windows.ts';
import type { EventOf, HistoryEvent, QueueSettings } from '../history.ts';
import { slotIdOf } from '../history.ts';

type At<T extends HistoryEvent['type']> = { e: EventOf<T>; i: number };

/**
 * One claim of a job and what became of it: the holder's renewals and the
 * event that ended the hold (its completion, failure, lost lease or hand-back,
 * or the rescuer taking it back). `i` is the history index.
 */
export interface Hold {
  claim: EventOf<'job:claimed'>;
  i: number;
  renewals: At<'lease:renewed'>[];
  completed?: At<'job:completed'>;
  failed?: At<'job:failed'>;
  lost?: At<'lease:lost'>;
  released?: At<'lease:released'>;
  /** Handed back uncharged for a retry shortly: its effect was held by another holder's open transaction. */
  deferred?: At<'job:deferred'>;
  rescued?: At<'lease:rescued'>;
}

/** Every hold of one job in claim order, and the rescues the rescuer reported for it. */
export interface JobLife {
  jobId: number;
  holds: Hold[];
  rescues: At<'lease:rescued'>[];
}

/**
 * The life of every job the history mentions, claim by claim. Holds are in
 * the order of their claims on the database clock (history order when a
 * claim lacks it): a worker frozen right after a claim reports it only when
 * it resumes, after the rescue that took it back. A worker's report
 * (completion, failure, lost lease, renewal, hand-back) belongs to the latest
 * hold with its worker id and attempt recorded before it; a rescue to the latest hold of its
 * owner claimed before it and not yet ended by its worker's report (of anyone, when the owner was
 * not recorded), preferring one with the attempt it reports.
 */
export function jobLives(history: readonly HistoryEvent[]): Map<number, JobLife> {
  const lives = new Map<number, JobLife>();
  const life = (jobId: number) => lives.get(jobId) ?? lives.set(jobId, { jobId, holds: [], rescues: [] }).get(jobId)!;
  history.forEach((e, i) => {
    if (e.type === 'job:claimed') life(e.jobId).holds.push({ claim: e, i, renewals: [] });
  });
  for (const l of lives.values()) {
    if (l.holds.every((h) => h.claim.dbTime !== undefined)) l.holds.sort((a, b) => a.claim.dbTime! - b.claim.dbTime! || a.claim.attempt - b.claim.attempt || a.i - b.i);
  }
  // A worker reports a claim before anything about it (one IPC channel, in order), so its report belongs to
  // its latest matching claim recorded before it: a hand-back and the same worker's re-claim of the same attempt differ.
  const holdOf = (report: HoldReport, i: number) => [...(lives.get(report.jobId)?.holds ?? [])].reverse().find((h) => sameHold(h.claim, report) && h.i < i);
  history.forEach((e, i) => {
    switch (e.type) {
      case 'lease:renewed':
        holdOf(e, i)?.renewals.push({ e, i });
        break;
      case 'job:completed':
      case 'job:failed':
      case 'lease:lost':
      case 'lease:released':
      case 'job:deferred': {
        const h = holdOf(e, i);
        const slot = ({ 'job:completed': 'completed', 'job:failed': 'failed', 'lease:lost': 'lost', 'lease:released': 'released', 'job:deferred': 'deferred' } as const)[e.type];
        if (h && !h[slot]) (h as unknown as Record<string, unknown>)[slot] = { e, i };
        break;
      }
      case 'lease:rescued': {
        const l = life(e.jobId);
        const rescue = { e, i };
        l.rescues.push(rescue);
        // A hold its worker already ended was not the one taken back: its worker's later claim was, unseen
        // when the process died before reporting it.
        const before = l.holds.filter((h) => claimedBefore(h, rescue) && !ended(h) && (e.owner == null || h.claim.workerId === e.owner));
        // The rescue reports the job's attempt count: the attempt it took back. A re-claim within the same
        // database millisecond is "claimed before" it too, and must not be taken for the rescued hold.
        const sameAttempt = before.filter((h) => h.claim.attempt === e.attempts);
        const pool = sameAttempt.length > 0 ? sameAttempt : before;
        const h = pool[pool.length - 1];
        if (h && !h.rescued) h.rescued = rescue; // the same object: checkers match a hold's rescue by identity
        break;
      }
    }
  });
  return lives;
}

/** What a worker's report about one of its holds carries: the fencing token, when the run recorded it. */
export type HoldReport = { jobId: number; workerId: string; attempt: number; leaseToken?: string };

/**
 * The report is about this claim's hold: the same fencing token when both carry one (a claim a failover lost
 * is made again with the same attempt number, at times by the same worker, under another token), else the
 * same worker and attempt (runs recorded before claims carried their token).
 */
export function sameHold(claim: HoldReport, report: HoldReport): boolean {
  if (claim.leaseToken !== undefined && report.leaseToken !== undefined) return claim.leaseToken === report.leaseToken;
  return claim.workerId === report.workerId && claim.attempt === report.attempt;
}

/** Its worker reported the hold's end; each of these reports follows a committed write, so no rescue can come after. */
function ended(h: Hold): boolean {
  return Boolean(h.completed || h.failed || h.released || h.deferred);
}

/** The hold was claimed before `x` happened: by the database clock when both carry it, else by history order. */
export function claimedBefore(h: Hold, x: { e: HistoryEvent; i: number }): boolean {
  return h.claim.dbTime !== undefined && x.e.dbTime !== undefined ? h.claim.dbTime <= x.e.dbTime : h.i < x.i;
}

/**
 * When a hold's lease ends by the history's own account (database clock):
 * the claim's expiry, moved by each renewal the holder reported before
 * `cutoff` (a rescue, a later claim). Undefined for runs recorded before
 * claims carried their expiry.
 */
export function leaseEnd(h: Hold, cutoff?: { e: HistoryEvent; i: number }): number | undefined {
  let end = h.claim.leaseExpiresAt;
  for (const r of h.renewals) {
    const before = !cutoff || (cutoff.e.dbTime !== undefined && r.e.dbTime !== undefined ? r.e.dbTime < cutoff.e.dbTime : r.i < cutoff.i);
    if (before && (end === undefined || r.e.leaseExpiresAt > end)) end = r.e.leaseExpiresAt;
  }
  return end;
}

/**
 * Why a lease ran out: its holder was killed, frozen, ran on with heartbeats
 * off (a stall), could not reach the database to renew (an outage fault),
 * the database's clock stepped past the lease's end (a db-clock-jump), or
 * its own clock ran slow, so its heartbeat came after the lease's end on the
 * database clock (a clock-rate fault).
 */
export type ExpiryCause = 'kill' | 'freeze' | 'stall' | 'outage' | 'clock-step' | 'cut-off' | 'slow-clock';

/** Faults that take the database away from the workers: a live holder's renewals may fail meanwhile (a reset, or a cut answer: a claim nobody heard of). */
const OUTAGE_FAULTS: ReadonlySet<string> = new Set(['db-restart', 'db-terminate-backends', 'pool-exhaust', 'reset', 'reset-after-commit']);

interface Window {
  fromT: number;
  toT: number;
}

/**
 * What happened to the worker processes, from the history: each node's exits
 * and freezes (worker-stop), and the settings each worker id reported.
 */
export class Fleetline {
  private readonly exits = new Map<string, number[]>();
  /** Exits nobody asked for (a kill, a crash): a process that may have died with reports still unsent. */
  private readonly unexpectedExits = new Map<string, number[]>();
  private readonly freezes = new Map<string, Window[]>();
  /** Windows in which a node's clock ran slow (clock-rate). */
  private readonly slowClocks = new Map<string, Window[]>();
  private readonly settings = new Map<string, EventOf<'worker:settings'>>();
  private readonly outages: number[] = [];
  private readonly clockSteps: Window[] = [];
  /** Partitions of one worker's link, and database-host faults of every worker's (fault-windows.ts). */
  private readonly cutOffs: CutWindow[];

  constructor(history: readonly HistoryEvent[]) {
    this.cutOffs = cutWindows(history);
    const push = <T>(m: Map<string, T[]>, k: string, v: T) => (m.get(k) ?? m.set(k, []).get(k)!).push(v);
    for (const e of history) {
      if (e.type === 'process:exited') {
        push(this.exits, e.node, e.t);
        if (!e.expected) push(this.unexpectedExits, e.node, e.t);
      }
      else if (e.type === 'fault:injected' && OUTAGE_FAULTS.has(e.fault)) this.outages.push(e.t);
      // The step took effect somewhere from its start (the event's t) to `committedByT` (absent from older stored runs).
      else if (e.type === 'fault:injected' && e.fault === 'db-clock-jump') this.clockSteps.push({ fromT: e.t, toT: typeof e.detail.committedByT === 'number' ? e.detail.committedByT : e.t });
      else if (e.type === 'worker:settings') this.settings.set(e.workerId, e);
      else if (e.type === 'fault:injected' && e.fault === 'clock-rate' && !e.detail.skipped) {
        const target = String(e.detail.target ?? '');
        if (e.detail.phase !== 'end') push(this.slowClocks, target, { fromT: e.t, toT: Number.POSITIVE_INFINITY });
        else for (const w of this.slowClocks.get(target) ?? []) if (w.toT === Number.POSITIVE_INFINITY) w.toT = e.t;
      }
      else if (e.type === 'fault:injected' && e.fault === 'worker-stop') {
        const target = String(e.detail.target ?? '');
        if (e.detail.phase === 'end') {
          const open = (this.freezes.get(target) ?? []).find((w) => w.toT === Number.POSITIVE_INFINITY);
          if (open) open.toT = e.t;
        } else if (target && !e.detail.armed && !e.detail.closed) push(this.freezes, target, { fromT: e.t, toT: Number.POSITIVE_INFINITY });
      } else if (e.type === 'fault:evidence' && e.fault === 'worker-stop' && e.detail.point !== undefined) {
        // A worker frozen at an armed point reports it from its own node just before it stops.
        push(this.freezes, e.node, { fromT: e.t, toT: Number.POSITIVE_INFINITY });
      }
    }
  }

  /** The node's process exited (was killed, or crashed) in (fromT, toT]. */
  exitedBetween(node: string, fromT: number, toT: number): boolean {
    return (this.exits.get(node) ?? []).some((t) => t > fromT && t <= toT);
  }

  /** How many times the node's process died unasked (killed, crashed) in (fromT, toT]. */
  unexpectedExitCount(node: string, fromT: number, toT: number): number {
    return (this.unexpectedExits.get(node) ?? []).filter((t) => t > fromT && t <= toT).length;
  }

  /** Some node died unasked in (fromT, toT]. */
  diedBetween(fromT: number, toT: number): boolean {
    for (const ts of this.unexpectedExits.values()) if (ts.some((t) => t > fromT && t <= toT)) return true;
    return false;
  }

  /** Some node other than `node` died unasked in (fromT, toT]. */
  diedOtherThan(node: string, fromT: number, toT: number): boolean {
    for (const [n, ts] of this.unexpectedExits) if (n !== node && ts.some((t) => t > fromT && t <= toT)) return true;
    return false;
  }

  /** The node was frozen at some moment of [fromT, toT]. */
  frozenBetween(node: string, fromT: number, toT: number): boolean {
    return (this.freezes.get(node) ?? []).some((w) => w.fromT <= toT && w.toT >= fromT);
  }

  /** Freeze windows of a node, for excluding the gaps they cause. */
  freezesOf(node: string): readonly Window[] {
    return this.freezes.get(node) ?? [];
  }

  /** What worker `workerId` reported as its settings, if it did. */
  settingsOf(workerId: string): EventOf<'worker:settings'> | undefined {
    return this.settings.get(workerId);
  }

  queueSettings(workerId: string, queue: string): QueueSettings | undefined {
    return this.settings.get(workerId)?.queues[queue];
  }

  /** Every worker's settings, in the order they started. */
  allSettings(): EventOf<'worker:settings'>[] {
    return [...this.settings.values()];
  }

  /**
   * Why the lease of hold `h` could have run out by `untilT` (harness time):
   * its process exited or was frozen meanwhile, it ran with heartbeats off
   * (a job longer than its lease stalls past it by design), or the database
   * was taken away meanwhile. Undefined: no recorded cause, so the lease
   * should have held.
   */
  expiryCause(h: Hold, untilT: number): ExpiryCause | undefined {
    const node = h.claim.node;
    // A claim reported late (its worker froze before it could send it) happened before what took it back.
    const fromT = Math.min(h.claim.t, untilT);
    if (this.exitedBetween(node, fromT, untilT)) return 'kill';
    if (this.frozenBetween(node, fromT, untilT)) return 'freeze';
    if (this.queueSettings(h.claim.workerId, h.claim.queue)?.heartbeatMs === 0) return 'stall';
    if (this.outages.some((t) => t >= fromT && t <= untilT)) return 'outage';
    if (this.cutOffs.some((w) => cuts(w, node) && w.fromT <= untilT && w.toT >= fromT)) return 'cut-off';
    if (this.clockStepBetween(fromT, untilT)) return 'clock-step';
    if ((this.slowClocks.get(node) ?? []).some((w) => w.fromT <= untilT && w.toT >= fromT)) return 'slow-clock';
    return undefined;
  }

  /** The database clock stepped (a db-clock-jump) at some moment of [fromT, toT]: database times across it differ by the step. */
  clockStepBetween(fromT: number, toT: number): boolean {
    return this.clockSteps.some((w) => w.fromT <= toT && w.toT >= fromT);
  }
}

/**
 * Whether a worker id the database holds (an effect row's writer, a sampler round's leader) names the process the
 * history calls `processId`: the same id, or, in a run whose slots reuse worker ids (the scenario's reuseWorkerIds),
 * the slot's one id that each of its processes ran under (`worker-1` for `worker-1.3`). The history names every
 * process apart (harness/runner/fleet.ts); the database cannot, so such an id names any process of the slot.
 */
export function namesProcess(dbId: string, processId: string): boolean {
  return dbId === processId || dbId === slotIdOf(processId);
}

/**
 * How far the harness's clock is ahead of the database's, ms: the smallest gap between a lease report's host time
 * and its database time (one host, one clock; a report only arrives after the statement ran). A database instant
 * plus this is when it happened on the harness's clock. Infinity with no such report.
 */
export function hostAheadOfDb(history: readonly HistoryEvent[]): number {
  let offset = Number.POSITIVE_INFINITY;
  for (const e of history) {
    if ((e.type === 'job:claimed' || e.type === 'lease:renewed') && e.leaseExpiresAt !== undefined && e.dbTime !== undefined) offset = Math.min(offset, e.t - e.dbTime);
  }
  return offset;
}
