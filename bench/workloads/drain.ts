import { systemClock } from '../../engine/clock.ts';
import { peakRssBytes, wallMs, WorkerChild } from '../proc.ts';
import type { BenchContext } from '../context.ts';
import { FAMILIES } from '../systems/configs.ts';
import type { BenchJob, SystemConfig } from '../systems/types.ts';
import { connect } from '../systems/util.ts';

export interface DrainResult {
  /** Workload 1b: the `n` jobs enqueued in one bulk call, jobs/s. */
  batchJobsPerSec: number;
  /** Workload 2: jobs/s from the start signal until the database shows every completion committed. */
  drainJobsPerSec: number;
  /** Largest VmHWM among the worker processes, MiB. */
  peakRssMiB: number | null;
  /** Jobs enqueued for this drain. */
  jobs: number;
  /** Jobs whose completion committed within the budget (`jobs` unless the budget cut the drain short). */
  drained: number;
}

const MiB = 1024 * 1024;

/** How often the parent looks at the children's counts, then at the database, while it waits for a drain's end, ms. */
const END_POLL_MS = 2;

/**
 * Workload 2: `n` no-op jobs enqueued first (as one batch: workload 1b is
 * timed here), then `procs` worker processes started together. The clock
 * runs from the start signal until the handlers have seen every job and the
 * database shows no unfinished job (batched completions must have committed),
 * or until `budgetMs`, whichever comes first. The end is seen within a few
 * milliseconds: the children report their counts every 2 ms, and the database
 * is read on a connection opened before the clock starts (a new connection per
 * look cost 6 ms on an idle server here, which a half-second drain cannot spare).
 */
export async function runDrain(ctx: BenchContext, config: SystemConfig, n: number, procs: number, budgetMs: number): Promise<DrainResult> {
  const family = FAMILIES[config.family];
  const db = await ctx.freshDatabase(config);
  const children: WorkerChild[] = [];
  const counter = await connect(db.url);
  try {
    const producer = await family.producer(db.url, config.settings, 1);
    const jobs: BenchJob[] = Array.from({ length: n }, () => ({ t: 0 }));
    const enqStart = wallMs();
    await producer.enqueueBatch(jobs);
    const batchJobsPerSec = n / ((wallMs() - enqStart) / 1000);
    await producer.close();

    for (let i = 0; i < procs; i++) children.push(new WorkerChild(config.id, db.url));
    await Promise.all(children.map((c) => c.ready()));
    const started = wallMs();
    await Promise.all(children.map((c) => c.go(END_POLL_MS)));
    // Past the budget the rate is taken over what has committed so far: a
    // slow system or disk makes the figure lower, never the bench unbounded.
    const deadline = started + budgetMs;
    const handled = () => children.reduce((s, c) => s + c.count, 0);
    while (handled() < n && wallMs() < deadline) await systemClock.sleep(END_POLL_MS);
    let remaining = await family.remaining(counter);
    while (remaining > 0 && wallMs() < deadline) {
      await systemClock.sleep(END_POLL_MS);
      remaining = await family.remaining(counter);
    }
    const seconds = (wallMs() - started) / 1000;
    const drained = n - remaining;
    const rss = children.map((c) => peakRssBytes(c.pid)).filter((x): x is number => x !== null);
    await Promise.all(children.map((c) => c.stop()));
    return { batchJobsPerSec, drainJobsPerSec: drained / seconds, peakRssMiB: rss.length ? Math.max(...rss) / MiB : null, jobs: n, drained };
  } finally {
    for (const c of children) c.kill();
    await counter.end().catch(() => {});
    await db.drop();
  }
}
