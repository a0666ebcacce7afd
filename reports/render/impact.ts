import type { ReportInput } from './input.ts';
import { elapsedOnDbClock } from '../../harness/history.ts';
import { dbAt, type HistoryIndex } from './job-index.ts';
import { percentile } from './format.ts';

/** What the incident cost, in figures taken from the history. */
export interface Impact {
  /** Due-to-start latency: per job, its first `job:started` minus the `runAt` it first became due at, less what a database clock step skipped in between. */
  latency: { jobs: number; p50Ms: number | null; p90Ms: number | null; p99Ms: number | null; maxMs: number | null; maxJobId: number | null };
  /** Jobs whose first start came later than the oldest-age SLO after they were due. */
  delayedJobs: number;
  /** Highest oldest-unclaimed-age any lane reached in a sample. */
  maxOldestAge: { ms: number; queue: string | null; t: number | null };
  /** Jobs with a `job:dead` event or a rescue that dead-lettered them. */
  deadLettered: { count: number; jobIds: number[]; finalRows: number };
  /** Jobs started more than once. */
  startedMoreThanOnce: number;
  /** Of those, jobs whose side effect still happened exactly once: duplicate deliveries the dedup absorbed. */
  duplicatesAbsorbed: { count: number; jobIds: number[] };
  /** Jobs whose side effect happened more than once (any delivery count): effects the dedup did not absorb. */
  duplicatedEffects: { count: number; jobIds: number[] };
  peakDepth: { depth: number; queue: string | null; t: number | null };
  /** Queue-state samples taken: with some, a null lane above means every sample read 0, not that none was taken. */
  samples: number;
  jobsEnqueued: number;
  jobsCompleted: number;
}

export function computeImpact(input: ReportInput, idx: HistoryIndex): Impact {
  const latencies: { jobId: number; ms: number }[] = [];
  let startedMoreThanOnce = 0;
  const absorbed: number[] = [];
  const duplicated: number[] = [];
  const dead = new Set<number>();
  for (const f of idx.jobs.values()) {
        if (f.starts.length > 0 && f.firstDueAt !== null) {
      const first = f.starts[0];
      // The start's own dbTime when recorded, else its harness t on the database's time base.
      const startedAt = first.dbTime ?? dbAt(idx, first.t);
      latencies.push({ jobId: f.jobId, ms: elapsedOnDbClock(f.firstDueAt!, startedAt, idx.dbSteps) });
    }
    if (f.dead || f.rescues.some((r) => r.dead)) dead.add(f.jobId);
    const effectCounts = [...f.effectKeys].map((k) => input.final.effects[k] ?? 0);
    if (effectCounts.some((n) => n > 1)) duplicated.push(f.jobId);
    if (f.starts.length > 1) {
      startedMoreThanOnce++;
      if (effectCounts.length > 0 && effectCounts.every((n) => n === 1)) absorbed.push(f.jobId);
    }
  }
  const ms = latencies.map((l) => l.ms);
  const worst = latencies.reduce<{ jobId: number; ms: number } | null>((w, l) => (w === null || l.ms > w.ms ? l : w), null);

  let maxOldestAge: Impact['maxOldestAge'] = { ms: 0, queue: null, t: null };
  let peakDepth: Impact['peakDepth'] = { depth: 0, queue: null, t: null };
  for (const s of idx.samples) {
    for (const [queue, age] of Object.entries(s.oldestUnclaimedAgeMs)) {
      if (age > maxOldestAge.ms) maxOldestAge = { ms: age, queue, t: s.t };
    }
    for (const [queue, depth] of Object.entries(s.depthByQueue)) {
      if (depth > peakDepth.depth) peakDepth = { depth, queue, t: s.t };
    }
  }
  const byId = (a: number, b: number) => a - b;
  return {
    latency: {
      jobs: ms.length,
      p50Ms: percentile(ms, 50),
      p90Ms: percentile(ms, 90),
      p99Ms: percentile(ms, 99),
      maxMs: worst?.ms ?? null,
      maxJobId: worst?.jobId ?? null,
    },
    delayedJobs: ms.filter((m) => m > input.thresholds.oldestAgeSloMs).length,
    maxOldestAge,
    deadLettered: { count: dead.size, jobIds: [...dead].sort(byId), finalRows: input.final.deadLetters.length },
    startedMoreThanOnce,
    duplicatesAbsorbed: { count: absorbed.length, jobIds: absorbed.sort(byId) },
    duplicatedEffects: { count: duplicated.length, jobIds: duplicated.sort(byId) },
    peakDepth,
    samples: idx.samples.length,
    jobsEnqueued: new Set(input.history.flatMap((e) => (e.type === 'enqueue:ok' ? [e.jobId] : []))).size,
    jobsCompleted: new Set(input.history.flatMap((e) => (e.type === 'job:completed' ? [e.jobId] : []))).size,
  };
}
