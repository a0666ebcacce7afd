import { systemClock } from '../../engine/clock.ts';
import { peakRssBytes, wallMs, WorkerChild } from '../proc.ts';
import type { BenchContext } from '../context.ts';
import { latencySummary, type LatencySummary } from '../stats.ts';
import { FAMILIES } from '../systems/configs.ts';
import type { SystemConfig } from '../systems/types.ts';

export interface LatencyResult extends LatencySummary {
  offeredPerSec: number;
  /** Enqueues that committed, per second of the offered window (below offered means the server could not take them). */
  achievedPerSec: number;
  /** Arrivals not sent because `maxInFlight` enqueues were already waiting: the server could not commit the offered rate. */
  shed: number;
  /** VmHWM of the worker process over the run, MiB: the same offered load for every system. */
  peakRssMiB: number | null;
}

const MiB = 1024 * 1024;

/** Enqueues allowed to wait at once; past this an arrival is shed and counted, so an overloaded run stays bounded. */
const MAX_IN_FLIGHT = 200;

/**
 * Workload 3: an open model. Job i is due at t0 + i / rate and is enqueued at
 * that instant whatever happened to earlier ones (one enqueue per job, no
 * waiting for the previous one), so a slow system meets a queue of arrivals
 * rather than slowing the arrivals down. Due-to-start = the instant the
 * handler starts minus the instant the job was due (its enqueue was issued),
 * so it includes the enqueue's own commit.
 */
export async function runLatency(ctx: BenchContext, config: SystemConfig, ratePerSec: number, durationS: number): Promise<LatencyResult> {
  const family = FAMILIES[config.family];
  const db = await ctx.freshDatabase(config);
  const child = new WorkerChild(config.id, db.url);
  try {
    const producer = await family.producer(db.url, config.settings, 10);
    await child.ready();
    await child.go();
    const total = Math.round(ratePerSec * durationS);
    const intervalMs = 1000 / ratePerSec;
    const t0 = wallMs() + 50;
    const inflight: Promise<void>[] = [];
    let errors = 0;
    let waiting = 0;
    let shed = 0;
    for (let i = 0; i < total; ) {
      const now = wallMs();
      while (i < total && t0 + i * intervalMs <= now) {
        if (waiting >= MAX_IN_FLIGHT) {
          shed++;
        } else {
          waiting++;
          inflight.push(
            producer
              .enqueueOne({ t: t0 + i * intervalMs })
              .catch(() => void errors++)
              .finally(() => void waiting--),
          );
        }
        i++;
      }
      if (i < total) await systemClock.sleep(Math.max(0, Math.min(1, t0 + i * intervalMs - wallMs())));
    }
    await Promise.all(inflight);
    const sent = total - errors - shed;
    const achievedPerSec = sent / ((wallMs() - t0) / 1000);
    const deadline = wallMs() + 30_000;
    while (child.count < sent && wallMs() < deadline) await systemClock.sleep(5);
    const rss = peakRssBytes(child.pid);
    const { latenciesMs } = await child.stop();
    await producer.close();
    return { ...latencySummary(latenciesMs), offeredPerSec: ratePerSec, achievedPerSec, shed, peakRssMiB: rss === null ? null : rss / MiB };
  } finally {
    child.kill();
    await db.drop();
  }
}
