import { cutWindows, DB_HOST_FAULTS } from '../../harness/checkers/fault-windows.ts';
import { cronAcrossFailover, failoverFacts, lostEnqueueCount, lostWrites, type AckedWrite, type LostWrite } from '../../harness/checkers/failover.ts';
import type { HistoryEvent } from '../../harness/history.ts';
import { fmtCount, fmtT } from './format.ts';
import type { ReportInput } from './input.ts';

/** Faults on the link or the database host whose windows the ledger accounts for. */
const LEDGER_FAULTS = new Set(['partition', 'latency', 'bandwidth', 'reset', 'reset-after-commit', ...DB_HOST_FAULTS, 'failover']);
/** How long after a fault ends a write still counts as written across it (a retried write landing, a lease running out). */
const AFTER_MS = 5_000;

/** One kind of acknowledged write across the faults, as a postmortem counts it. */
export interface LedgerRow {
  kind: string;
  acknowledged: number;
  kept: number;
  lost: { n: number; cause: string; ids: number[] };
  duplicated: { n: number; cause: string; ids: number[] };
}

export interface WriteLedger {
  fromT: number;
  toT: number;
  rows: LedgerRow[];
  /** Each answer a reset-after-commit cut, and how it was resolved. */
  cuts: string[];
  /** The failover, when the run had one that promoted the standby: what happened, and every acknowledged write it lost. */
  failover: FailoverAccount | null;
}

/** A failover as a postmortem tells it: the facts with their times, the accounting by kind, and each lost write. */
export interface FailoverAccount {
  facts: string[];
  rows: LedgerRow[];
  lost: LostWrite[];
}

/**
 * Every write the system acknowledged from the first link or database-host
 * fault to 5 s after the last one ended, against the final state: an
 * enqueue kept (its job is there) or lost; a completion kept (the job ended
 * done and was not run again) or undone, or rerun; an effect applied once
 * or more than once. Null when the run had no such fault. Pure.
 */
export function writeLedger(input: ReportInput): WriteLedger | null {
  const marks = input.history.filter((e) => e.type === 'fault:injected' && LEDGER_FAULTS.has(e.fault) && e.detail.skipped === undefined);
  if (!marks.length) return null;
  const windows = cutWindows(input.history, LEDGER_FAULTS);
  const fromT = Math.min(...marks.map((e) => e.t));
  const toT = Math.max(...marks.map((e) => e.t), ...windows.map((w) => (Number.isFinite(w.toT) ? w.toT : w.fromT))) + AFTER_MS;
  const within = (e: HistoryEvent) => e.t >= fromT && e.t <= toT;
  const jobs = new Map(input.final.jobs.map((j) => [j.id, j]));
  const claimsAfter = new Map<number, number[]>();
  for (const e of input.history) if (e.type === 'job:claimed') (claimsAfter.get(e.jobId) ?? claimsAfter.set(e.jobId, []).get(e.jobId)!).push(e.t);

  const enqueues = input.history.filter((e): e is Extract<HistoryEvent, { type: 'enqueue:ok' }> => e.type === 'enqueue:ok' && within(e));
  const lostEnqueues = enqueues.filter((e) => !jobs.has(e.jobId)).map((e) => e.jobId);
  const completions = input.history.filter((e): e is Extract<HistoryEvent, { type: 'job:completed' }> => e.type === 'job:completed' && within(e));
  const undone = completions.filter((e) => jobs.get(e.jobId)?.state !== 'done' && jobs.has(e.jobId)).map((e) => e.jobId);
  const rerun = completions.filter((e) => (claimsAfter.get(e.jobId) ?? []).some((t) => t > e.t)).map((e) => e.jobId);
  const effects = input.history.filter((e): e is Extract<HistoryEvent, { type: 'effect:applied' }> => e.type === 'effect:applied' && within(e));
  const twice = effects.filter((e) => (input.final.effects[e.key] ?? 0) > 1).map((e) => e.jobId);
  const missingEffects = effects.filter((e) => (input.final.effects[e.key] ?? 0) === 0).map((e) => e.jobId);
  const row = (kind: string, acknowledged: number, lost: LedgerRow['lost'], duplicated: LedgerRow['duplicated']): LedgerRow => ({
    kind,
    acknowledged,
    kept: acknowledged - lost.n - duplicated.n,
    lost,
    duplicated,
  });
  const rows = [
    row('enqueue', enqueues.length, { n: lostEnqueues.length, cause: 'job missing from the final state', ids: lostEnqueues }, { n: 0, cause: '', ids: [] }),
    row('completion', completions.length, { n: undone.length, cause: 'job not done at the end (completion undone)', ids: undone }, { n: rerun.length, cause: 'job claimed again after its completion (rerun)', ids: rerun }),
    row('effect', effects.length, { n: missingEffects.length, cause: 'effect row missing at the end', ids: missingEffects }, { n: twice.length, cause: 'effect applied more than once', ids: twice }),
  ];
  const cuts = input.history
    .filter((e) => e.type === 'fault:evidence' && e.fault === 'reset-after-commit')
    .map((e) => {
      const d = (e as Extract<HistoryEvent, { type: 'fault:evidence' }>).detail;
      const what = d.point === 'enqueue' ? `key \`${d.key}\` (job ${d.committedJobId}, the re-send answered job ${d.resentAnswer})` : `job${(d.jobIds as number[]).length === 1 ? '' : 's'} ${(d.jobIds as number[]).join(', ')}`;
      const states = d.point === 'enqueue' ? '' : `; at the end: ${(d.jobIds as number[]).map((id) => `${id} ${jobs.get(id)?.state ?? 'missing'}`).join(', ')}`;
      return `${fmtT(e.t)}: the answer to a committed ${d.point} (\`${d.statement}\`, ${d.target}) was cut: ${what}${states}.`;
    });
  return { fromT, toT, rows, cuts, failover: failoverAccount(input) };
}

/**
 * The failover's own accounting, over every write the run acknowledged (a
 * write acknowledged before the hold can be lost too if the standby lacked
 * it): kept, lost with its kind, and each lost write by id. Pure.
 */
function failoverAccount(input: ReportInput): FailoverAccount | null {
  const f = failoverFacts(input.history);
  if (!f) return null;
  const { acknowledged, lost } = lostWrites(input.history, input.final, f);
  // Duplicated: the write's outside work ran twice (an effect, a cron occurrence's effect); lost: anything else undone.
  const twice: ReadonlySet<LostWrite['kind']> = new Set(['effect ran twice', 'cron occurrence fired twice']);
  const part = (write: AckedWrite, duplicated: boolean) => {
    const ls = lost.filter((l) => l.write === write && (write === 'effect' && twice.has(l.kind)) === duplicated);
    const kinds = [...new Set(ls.map((l) => l.kind))];
    const causes = kinds.map((k) => `${fmtCount(ls.filter((l) => l.kind === k).length)} ${k}`);
    return { n: ls.length, cause: causes.join(', '), ids: ls.map((l) => l.jobId) };
  };
  const row = (kind: AckedWrite): LedgerRow => {
    const l = part(kind, false);
    const d = part(kind, true);
    return { kind, acknowledged: acknowledged[kind], kept: acknowledged[kind] - l.n - d.n, lost: l, duplicated: d };
  };
  const rows = [row('enqueue'), row('claim'), row('completion'), row('effect')];
  const ms = (v: number | null) => (v === null ? 'unknown' : `${fmtCount(Math.round(v))} ms`);
  const outside = lost.filter((l) => !l.inLagWindow).length;
  const cron = cronAcrossFailover(input.history, input.final, f, lost);
  const keyList = (keys: string[]) => (keys.length ? `: ${keys.map((k) => `\`${k}\``).join(', ')}` : '');
  const facts = [
    `${f.replication === 'sync' ? 'Synchronous' : 'Asynchronous'} replication (the primary reported the standby \`${f.syncState ?? 'absent'}\`); the replication link held from ${fmtT(f.heldT)}.`,
    `The primary was killed at ${fmtT(f.killT)} (${f.primaryGone ? 'its postmaster gone and its port refusing' : 'NOT shown gone'}); the standby was promoted and the proxy re-pointed at ${fmtT(f.promotedT)}, ${ms(f.promotedT - f.killT)} later.`,
    `Lag at the promotion: ${f.lagBytes === null ? 'unknown' : `${fmtCount(f.lagBytes)} bytes`} of WAL not replayed, ${ms(f.lagMs)} since the last commit the standby replayed${f.lastReplayedCommitT === null ? '' : ` (${fmtT(f.lastReplayedCommitT)})`}: a write acknowledged from then to the promotion could be lost.`,
    `First claim after the promotion: ${ms(f.firstClaimAfterPromotionMs)}.`,
    `Cron occurrences due from the hold to the promotion (database clock): ${fmtCount(cron.due.length)}${keyList(cron.due)}; fired twice: ${fmtCount(cron.firedTwice.length)}${keyList(cron.firedTwice)}.`,
    `Lost: ${fmtCount(lost.length)} acknowledged writes, ${fmtCount(outside)} of them outside the lag window; lost enqueues ${fmtCount(lostEnqueueCount(lost))}, counted independently by SQL on the promoted primary: ${f.sqlMissingEnqueues === undefined ? 'not counted' : fmtCount(f.sqlMissingEnqueues)}.`,
  ];
  return { facts, rows, lost };
}

/** Each lost write of a failover, for the report: id, kind, when acknowledged, inside the lag window or not, why. */
export function lostWritesTable(a: FailoverAccount): string[][] {
  return a.lost.map((l) => [`job ${l.jobId}`, l.kind, fmtT(l.ackedT), l.inLagWindow ? 'yes' : 'NO', l.detail ?? '']);
}

/** The ledger's table rows, for the report. */
export function ledgerTable(l: Pick<WriteLedger, 'rows'>): string[][] {
  const ids = (x: { n: number; cause: string; ids: number[] }) => (x.n ? `${fmtCount(x.n)}: ${x.cause} (${x.ids.slice(0, 8).map((id) => `job ${id}`).join(', ')}${x.n > 8 ? ', …' : ''})` : '0');
  return l.rows.map((r) => [r.kind, fmtCount(r.acknowledged), fmtCount(r.kept), ids(r.lost), ids(r.duplicated)]);
}
