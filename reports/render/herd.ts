import { becameDueAt, type DbClockStep, type EventOf } from '../../harness/history.ts';
import type { ReportInput } from './input.ts';
import { runTOfDb, type HistoryIndex, type JobFacts } from './job-index.ts';
import { fmtCount, fmtList, fmtOffset, fmtT, plural } from './format.ts';

/**
 * The thundering herd, and where it came from, as far as the history shows:
 * the busiest second of jobs becoming due, and for each of its jobs the
 * recorded origin. A job became due when its run_at arrived, or, if a step of
 * the database clock skipped over its run_at, at the step.
 */
export type HerdOrigin = 'delayed' | 'retry' | 'cron' | 'load' | 'harness' | 'unknown';

export interface Herd {
  /** Start of the busiest second, history t ms. */
  t: number;
  jobs: number;
  medianPerSecond: number;
  /** The herd's jobs by recorded origin. */
  byOrigin: Partial<Record<HerdOrigin, number>>;
  /** The database clock step the herd's second holds, when there is one: the herd is what it skipped over. */
  step: (DbClockStep & { fault: EventOf<'fault:injected'> }) | null;
  /** The `thundering-herd` fault whose bulk insert the herd is, when there is one. */
  harnessFault: EventOf<'fault:injected'> | null;
}

const ORIGIN_WORDS: Record<HerdOrigin, [string, string]> = {
  delayed: ['delayed job', 'delayed jobs'],
  retry: ['retry waiting out its backoff', 'retries waiting out their backoff'],
  cron: ['cron occurrence', 'cron occurrences'],
  load: ['job of the offered load', 'jobs of the offered load'],
  harness: ['job of the bulk insert', 'jobs of the bulk insert'],
  unknown: ['job of unrecorded origin', 'jobs of unrecorded origin'],
};

/** A thundering-herd fault's jobs: the ones it listed, or the ones due at the single run_at it recorded. */
function harnessHerdOf(idx: HistoryIndex): { fault: EventOf<'fault:injected'>; runAtMs: number | null; ids: Set<number> }[] {
  return idx.faults
    .filter((f) => f.fault === 'thundering-herd' && f.detail.phase === undefined)
    .map((f) => ({
      fault: f,
      runAtMs: typeof f.detail.runAt === 'string' ? Date.parse(f.detail.runAt) : null,
      ids: new Set(Array.isArray(f.detail.jobIds) ? f.detail.jobIds.filter((x): x is number => typeof x === 'number') : []),
    }));
}

function originOf(f: JobFacts, idx: HistoryIndex, herds: ReturnType<typeof harnessHerdOf>, keys: Map<number, string | null>): HerdOrigin {
  if (herds.some((h) => h.ids.has(f.jobId) || (h.runAtMs !== null && f.firstDueAt === h.runAtMs && !f.enqueued))) return 'harness';
  if (keys.get(f.jobId)?.startsWith('cron:')) return 'cron';
  const pre = idx.preloaded.get(f.jobId);
  if (pre) return pre;
  // A job first seen at attempt 2 or later, after a recorded failure, came back as a retry.
  if (f.claims[0] && f.claims[0].attempt > 1 && f.failures.length > 0) return 'retry';
  if (f.enqueued) return 'load';
  return 'unknown';
}

/** The busiest second of jobs becoming due, when it stands far above the typical second (5× the median and at least 50 jobs). */
export function findHerd(input: ReportInput, idx: HistoryIndex): Herd | null {
  const bins = new Map<number, JobFacts[]>();
  for (const f of idx.jobs.values()) {
    // Every instant the job became due: first, and again for each retry (a retry waits out its backoff first).
    const secs = new Set<number>();
    for (const runAt of [f.firstDueAt, ...f.claims.map((c) => c.runAt)]) {
      if (runAt !== null) secs.add(Math.floor(runTOfDb(idx, becameDueAt(runAt, idx.dbSteps)) / 1000));
    }
    for (const sec of secs) {
      const b = bins.get(sec) ?? [];
      b.push(f);
      bins.set(sec, b);
    }
  }
  if (bins.size === 0) return null;
  const counts = [...bins.values()].map((b) => b.length).sort((a, b) => a - b);
  const median = counts[Math.floor((counts.length - 1) / 2)];
  const [sec, jobs] = [...bins.entries()].reduce((best, cur) => (cur[1].length > best[1].length ? cur : best));
  if (jobs.length < 50 || jobs.length < 5 * median) return null;
  const herds = harnessHerdOf(idx);
  const keys = new Map(input.final.jobs.map((j) => [j.id, j.idempotencyKey]));
  const byOrigin: Herd['byOrigin'] = {};
  for (const f of jobs) {
    const o = originOf(f, idx, herds, keys);
    byOrigin[o] = (byOrigin[o] ?? 0) + 1;
  }
  const inSecond = (t: number) => Math.floor(t / 1000) === sec;
  const stepIdx = idx.dbSteps.findIndex((s) => inSecond(s.t));
  const stepFault = idx.faults.filter((f) => f.fault === 'db-clock-jump' && typeof f.detail.dbBeforeMs === 'number')[stepIdx];
  const harnessFault = herds.find((h) => jobs.some((f) => h.ids.has(f.jobId) || f.firstDueAt === h.runAtMs))?.fault ?? null;
  return {
    t: sec * 1000,
    jobs: jobs.length,
    medianPerSecond: median,
    byOrigin,
    step: stepIdx >= 0 && stepFault ? { ...idx.dbSteps[stepIdx], fault: stepFault } : null,
    harnessFault,
  };
}

/** The herd in words: its size, what made it, and its jobs by origin. */
export function herdSentence(h: Herd): string {
  const parts = (Object.keys(ORIGIN_WORDS) as HerdOrigin[])
    .filter((o) => (h.byOrigin[o] ?? 0) > 0)
    .map((o) => `${fmtCount(h.byOrigin[o]!)} ${h.byOrigin[o] === 1 ? ORIGIN_WORDS[o][0] : ORIGIN_WORDS[o][1]}`);
  let s = `A thundering herd: ${plural(h.jobs, 'job')} became due in the one second from ${fmtT(h.t)}, against a median of ${fmtCount(h.medianPerSecond)} per second (${fmtList(parts)})`;
  if (h.step) {
    s += `. They became due together because the database clock stepped ${fmtOffset(h.step.toMs - h.step.fromMs)} at ${fmtT(h.step.t)} (fault \`db-clock-jump\`), from ${new Date(h.step.fromMs).toISOString()} to ${new Date(h.step.toMs).toISOString()}: their run_at lay inside the step`;
    const due = h.step.fault.detail.dueAtOnce as Record<string, number> | undefined;
    if (due) s += `; at the step the database counted ${fmtCount(due.delayed ?? 0)} delayed jobs, ${fmtCount(due.retry ?? 0)} retries and ${fmtCount(due.cron ?? 0)} cron rows written ahead inside it`;
    const cron = h.byOrigin.cron ?? 0;
    if (cron > (due?.cron ?? 0)) s += `, so ${fmtCount(cron - (due?.cron ?? 0))} of the herd's cron occurrences were written after the step (catch-up)`;
  } else if (h.harnessFault) {
    s += `. It was one bulk insert by the harness's \`thundering-herd\` fault at ${fmtT(h.harnessFault.t)}, every row with the same run_at`;
  }
  return `${s}.`;
}

/**
 * How the herd and a crash loop overlapped, from their recorded times: the
 * crashes that fell while the herd was still draining, and the jobs that
 * went down with them.
 */
export function compoundingSentence(h: Herd, crashers: { jobId: number; firstCrashT: number; lastCrashT: number; deadT: number | null; crashes: number }[], recoveredT: number | null, bystanders: number): string | null {
  const endT = recoveredT ?? Infinity;
  const during = crashers.filter((c) => c.lastCrashT >= h.t - 5_000 && c.firstCrashT <= endT);
  if (during.length === 0) return null;
  const first = Math.min(...during.map((c) => c.firstCrashT));
  const last = Math.max(...during.map((c) => c.deadT ?? c.lastCrashT));
  const crashes = during.reduce((n, c) => n + c.crashes, 0);
  const until = recoveredT !== null ? `until oldest-unclaimed-age was back under the SLO at ${fmtT(recoveredT)}` : 'and had not drained when the history ended';
  return (
    `The crash loop and the herd overlapped: ${plural(during.length, 'poison job')} (${fmtList(during.map((c) => c.jobId))}) crashed workers ${plural(crashes, 'time')} between ${fmtT(first)} and ${fmtT(last)}, ` +
    `while the herd that became due at ${fmtT(h.t)} waited to be claimed ${until}; each crash took a worker process and its jobs in flight out of the fleet` +
    (bystanders > 0 ? ` (${plural(bystanders, 'other job')} went down with the crashed processes and ran again after their leases expired)` : '') +
    '.'
  );
}

/** The first sample at or after `t` with every lane back under the SLO, once some lane had gone over it after `t`; null if it never came back. */
export function recoveryAfter(idx: HistoryIndex, t: number, sloMs: number): number | null {
  let over = false;
  for (const s of idx.samples) {
    if (s.t < t) continue;
    const worst = Math.max(0, ...Object.values(s.oldestUnclaimedAgeMs));
    if (worst > sloMs) over = true;
    else if (over) return s.t;
  }
  return over ? null : t;
}
