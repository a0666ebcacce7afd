import type { HistoryEvent } from '../history.ts';

/** Faults of the database host: every worker is cut off from it (paused) or refused by it (read-only, full, locked). */
export const DB_HOST_FAULTS: ReadonlySet<string> = new Set(['db-pause', 'connections-exhausted', 'read-only', 'lock-jobs-table']);

/** A span of harness time during which some workers could not use the database, and which fault it was. */
export interface CutWindow {
  fault: string;
  seq: number;
  /** The worker slots cut off (`worker-0`), or null for every worker (a database-host fault). */
  node: string | null;
  fromT: number;
  /** When it healed or cleared; Infinity if the history never says. */
  toT: number;
  direction?: string;
}

/**
 * The windows of link partitions (per worker) and database-host faults (every
 * worker), from the nemesis's own records: `fault:injected` when it began and
 * the same fault's `phase: 'end'` record. A skipped or failed injection opens none.
 */
export function cutWindows(history: readonly HistoryEvent[], faults: ReadonlySet<string> = new Set(['partition', ...DB_HOST_FAULTS])): CutWindow[] {
  const open = new Map<string, CutWindow>();
  const out: CutWindow[] = [];
  for (const e of history) {
    if (e.type !== 'fault:injected' || !faults.has(e.fault)) continue;
    const d = e.detail;
    if (d.skipped !== undefined || d.error !== undefined) continue;
    const node = typeof d.target === 'string' ? d.target : null;
    const id = `${d.seq}:${node ?? '*'}`;
    if (d.phase === 'end') {
      const w = open.get(id);
      if (w) {
        w.toT = e.t;
        open.delete(id);
      }
      continue;
    }
    const w: CutWindow = { fault: e.fault, seq: Number(d.seq), node, fromT: e.t, toT: Number.POSITIVE_INFINITY, ...(d.direction ? { direction: String(d.direction) } : {}) };
    open.set(id, w);
    out.push(w);
  }
  return out;
}

/** True when `node` (`worker-0`) was cut off by `w`. */
export function cuts(w: CutWindow, node: string): boolean {
  return w.node === null || w.node === node;
}

/** One hold of a job: a claim by a node, until it ended (or Infinity). */
export interface Hold {
  jobId: number;
  attempt: number;
  node: string;
  /** The holder's worker id (a rescue names it as the lease's owner). */
  workerId: string;
  /** When the claim was reported (a claim whose answer a partition held is reported after the database made it). */
  claimT: number;
  /** When the holder reported the hold over (completed, failed, deferred, released, lost), or Infinity. */
  endT: number;
  end?: HistoryEvent;
}

/** Every hold of every job, in claim order, each ended by its holder's own report of the same attempt. */
export function holdsOf(history: readonly HistoryEvent[]): Hold[] {
  const holds: Hold[] = [];
  const openBy = new Map<string, Hold>();
  const key = (jobId: number, attempt: number, node: string) => `${jobId}:${attempt}:${node}`;
  for (const e of history) {
    if (e.type === 'job:claimed') {
      const h: Hold = { jobId: e.jobId, attempt: e.attempt, node: e.node, workerId: e.workerId, claimT: e.t, endT: Number.POSITIVE_INFINITY };
      holds.push(h);
      openBy.set(key(e.jobId, e.attempt, e.node), h);
      continue;
    }
    if (e.type === 'job:completed' || e.type === 'job:failed' || e.type === 'job:deferred' || e.type === 'lease:released' || e.type === 'lease:lost') {
      const h = openBy.get(key(e.jobId, e.attempt, e.node));
      if (h && h.end === undefined) {
        h.endT = e.t;
        h.end = e;
        openBy.delete(key(e.jobId, e.attempt, e.node));
      }
    }
  }
  return holds;
}

/** The largest lease any worker reported (worker:settings), ms; undefined when none did. */
export function longestLeaseMs(history: readonly HistoryEvent[]): number | undefined {
  let max: number | undefined;
  for (const e of history) {
    if (e.type !== 'worker:settings') continue;
    for (const q of Object.values(e.queues)) max = Math.max(max ?? 0, q.leaseMs);
  }
  return max;
}
