import { systemClock } from '../../engine/clock.ts';
import { peakRssBytes, wallMs, WorkerChild } from '../proc.ts';
import type { BenchContext } from '../context.ts';
import { latencySummary, type LatencySummary } from '../stats.ts';
import { FAMILIES } from '../systems/configs.ts';
import type { SystemConfig } from '../systems/types.ts';
import { offerOpenLoop } from './offer.ts';

export interface LatencyResult extends LatencySummary {
  offeredPerSec: number;
  /** Enqueues that committed, per second of the offered window (below offered means the server could not take them). */
  achievedPerSec: number;
  /** Arrivals not sent because `maxInFlight` enqueues were already waiting: the server could not commit the offered rate. */
  shed: number;
  /** VmHWM of the worker process over the run, MiB: the same offered load for every system. */
  peakRssMiB: number | null;
  /** Largest due-to-start of the warm-up's arrivals, ms (not in p50..max): what a cold start costs the first jobs. */
  warmupMax: number;
}

const MiB = 1024 * 1024;

/**
 * Workload 3: an open model (offerOpenLoop) at `ratePerSec`. Due-to-start = the instant the
 * handler starts minus the instant the job was due (its enqueue was issued),
 * so it includes the enqueue's own commit.
 *
 * The first `warmupS` of arrivals, at the same rate and with no gap after
 * them, warm every system alike and are not in the summary: the first INSERT
 * on each of the producer's ten fresh connections, all at once, and the
 * worker's first claims took 15-40 ms, so a window's max was most often its
 * first jobs', the load generator's cold start rather than the steady state
 * the row is about (docs/performance.md, "Measuring what the rows say").
 * Their largest due-to-start is reported beside it (`warmupMax`).
 */
export async function runLatency(ctx: BenchContext, config: SystemConfig, ratePerSec: number, durationS: number, warmupS: number): Promise<LatencyResult> {
  const family = FAMILIES[config.family];
  const db = await ctx.freshDatabase(config);
  const child = new WorkerChild(config.id, db.url);
  try {
    const producer = await family.producer(db.url, config.settings, 10);
    await child.ready();
    await child.go();
    const warmups = Math.round(ratePerSec * warmupS);
    const total = warmups + Math.round(ratePerSec * durationS);
    const offered = await offerOpenLoop(producer, ratePerSec, total, wallMs() + 50, (i, t) => (i < warmups ? { t, warmup: true } : { t }));
    const sent = offered.committed;
    const { achievedPerSec, shed } = offered;
    const deadline = wallMs() + 30_000;
    while (child.count < sent && wallMs() < deadline) await systemClock.sleep(5);
    const rss = peakRssBytes(child.pid);
    const { latenciesMs, warmupLatenciesMs } = await child.stop();
    await producer.close();
    return {
      ...latencySummary(latenciesMs),
      offeredPerSec: ratePerSec,
      achievedPerSec,
      shed,
      peakRssMiB: rss === null ? null : rss / MiB,
      warmupMax: latencySummary(warmupLatenciesMs).max,
    };
  } finally {
    child.kill();
    await db.drop();
  }
}
