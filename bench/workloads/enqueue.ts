import { wallMs } from '../proc.ts';
import type { BenchContext } from '../context.ts';
import { FAMILIES } from '../systems/configs.ts';
import type { SystemConfig } from '../systems/types.ts';

export interface EnqueueResult {
  /** Jobs per second, one INSERT per job, `concurrency` at a time. */
  oneJobsPerSec: number;
  /** Jobs enqueued: `n`, or fewer when the time budget ran out first. */
  jobs: number;
}

/**
 * Workload 1a: `n` jobs, one enqueue call each, `concurrency` callers at
 * once, wall clock over the run. Stops early at `budgetMs` (a slow disk must
 * not make the bench unbounded); the rate is then over what was enqueued.
 */
export async function runEnqueueOne(ctx: BenchContext, config: SystemConfig, n: number, concurrency: number, budgetMs: number): Promise<EnqueueResult> {
  const db = await ctx.freshDatabase(config);
  const producer = await FAMILIES[config.family].producer(db.url, config.settings, concurrency);
  try {
    let next = 0;
    let done = 0;
    const started = wallMs();
    const deadline = started + budgetMs;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < n && wallMs() < deadline) {
          next++;
          await producer.enqueueOne({ t: 0 });
          done++;
        }
      }),
    );
    const seconds = (wallMs() - started) / 1000;
    return { oneJobsPerSec: done / seconds, jobs: done };
  } finally {
    await producer.close();
    await db.drop();
  }
}
