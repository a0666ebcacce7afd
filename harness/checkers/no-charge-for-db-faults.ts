import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { cutWindows, DB_HOST_FAULTS, type CutWindow } from './fault-windows.ts';
import { firstN, fmt, maxOf, type CheckerDef } from './types.ts';

export interface NoChargeBounds {
  /** How long after a fault clears its effects may still land (a write retried, a lease run out), ms. */
  graceMs: number;
  /** Work resumes (a claim or a completion) within this long after the fault clears, ms. */
  resumeMs: number;
}

/** A failure whose error is the database's, not the job's: what a worker that charged it for a database fault would write. */
const DB_ERROR_TEXT = /read-only transaction|too many clients|remaining connection slots|terminating connection|Connection terminated|ECONNRESET|ECONNREFUSED|canceling statement|the database system is (starting|shutting) up|the database system is in recovery mode/i;

/** The faults judged: the database host's, and a failover (from the hold of the replication link to the promotion). */
const JUDGED_FAULTS: ReadonlySet<string> = new Set([...DB_HOST_FAULTS, 'failover']);

/** What a database-host fault must show: the kind of db:error the workers count for it (pauses and locks make statements wait, not fail). */
const DETECTED_AS: Record<string, string | undefined> = { 'read-only': 'read_only', 'connections-exhausted': 'too_many_connections' };

/**
 * A database that pauses, refuses writes, runs out of connection slots or
 * holds its jobs table locked charges no job anything: within each such
 * fault and graceMs after it, no job fails with a database error and no
 * lease is rescued (a rescue charges the attempt, or a crash). A read-only
 * primary and exhausted connections are detected: a worker reports a
 * `db:error` of that kind (the log line and the
 * stampede_worker_db_errors_total series come from the same event). And
 * work resumes: a claim or a completion within resumeMs of the fault
 * clearing. Unknown with no such fault.
 */
export function checkNoChargeForDbFaults(history: readonly HistoryEvent[], _final: FinalState, bounds: NoChargeBounds): InvariantResult {
  const windows = cutWindows(history, JUDGED_FAULTS);
  const charged: unknown[] = [];
  const undetected: unknown[] = [];
  const stalled: unknown[] = [];
  const resumeMs: number[] = [];
  let outcomes = 0;
  const inside = (w: CutWindow, t: number) => t >= w.fromT && t <= w.toT + bounds.graceMs;
  for (const w of windows) {
    for (const e of history) {
      if (!inside(w, e.t)) continue;
      if (e.type === 'job:completed' || e.type === 'job:failed' || e.type === 'lease:rescued' || e.type === 'job:deferred') outcomes++;
      if (e.type === 'job:failed' && DB_ERROR_TEXT.test(e.error)) charged.push({ fault: w.fault, jobId: e.jobId, attempt: e.attempt, error: e.error.slice(0, 120) });
      if (e.type === 'lease:rescued') charged.push({ fault: w.fault, jobId: e.jobId, rescued: true, crashed: e.crashed ?? null });
    }
    const kind = DETECTED_AS[w.fault];
    if (kind && !history.some((e) => e.type === 'db:error' && e.kind === kind && e.t >= w.fromT && e.t <= w.toT + bounds.graceMs)) {
      undetected.push({ fault: w.fault, seq: w.seq, expected: `db:error of kind ${kind}` });
    }
    const resumed = history.find((e) => (e.type === 'job:claimed' || e.type === 'job:completed') && e.t > w.toT);
    const after = resumed ? resumed.t - w.toT : Number.POSITIVE_INFINITY;
    resumeMs.push(after);
    if (!(after <= bounds.resumeMs)) stalled.push({ fault: w.fault, seq: w.seq, clearedAtT: w.toT, resumedAfterMs: Number.isFinite(after) ? after : 'never' });
  }
  const slowest = resumeMs.length ? maxOf(resumeMs.filter(Number.isFinite)) : Number.NaN;
  const figure =
    `${fmt(charged.length)} jobs charged, ${fmt(undetected.length)} faults undetected, ${fmt(stalled.length)} not resumed in time, over ${fmt(windows.length)} database-host faults` +
    (Number.isFinite(slowest) ? `; work resumed at most ${fmt(slowest)} ms after a fault cleared` : '');
  const base = {
    name: 'no-charge-for-db-faults',
    figure,
    bound: `0 charged during a fault and ${fmt(bounds.graceMs)} ms after; read-only and exhausted connections detected; resumed within ${fmt(bounds.resumeMs)} ms`,
    judged: { n: outcomes, what: 'job outcomes during and just after database-host faults' },
  };
  const examples = [...firstN(charged).map((c) => ({ charged: c })), ...firstN(undetected).map((u) => ({ undetected: u })), ...firstN(stalled).map((s) => ({ stalled: s }))];
  if (examples.length) return { ...base, pass: false, examples };
  return { ...base, pass: windows.length > 0 ? true : 'unknown' };
}

export const noChargeForDbFaults: CheckerDef<NoChargeBounds> = {
  name: 'no-charge-for-db-faults',
  says: 'a paused, read-only, full or locked database, or a failover, charges no job an attempt or a crash; read-only and exhausted connections are detected; work resumes after',
  check: checkNoChargeForDbFaults,
  bounds: { graceMs: 'number', resumeMs: 'number' },
  defaults: { graceMs: 2_000, resumeMs: 5_000 },
};
