import { systemClock } from '../../engine/clock.ts';
import { wallMs } from '../proc.ts';
import type { BenchJob, Producer } from '../systems/types.ts';

/** Enqueues allowed to wait at once; past this an arrival is shed and counted, so an overloaded run stays bounded. */
export const MAX_IN_FLIGHT = 200;

export interface Offered {
  /** Enqueues that committed. */
  committed: number;
  errors: number;
  /** Arrivals not sent because `MAX_IN_FLIGHT` enqueues were already waiting: the server could not commit the offered rate. */
  shed: number;
  /** Committed enqueues per second from `t0` to the last commit. */
  achievedPerSec: number;
}

/**
 * An open model: arrival i is due at t0 + i / rate and is enqueued at that
 * instant whatever happened to earlier ones (no waiting for the previous
 * one), so a slow system meets a queue of arrivals rather than slowing the
 * arrivals down. One enqueue per job, or with `batchMs` the arrivals due in
 * each `batchMs` tick in one bulk enqueue (the library's own call, one
 * commit). `job(i, due)` is the payload of arrival i; `progress` (when given)
 * is kept current as enqueues commit, for a monitor reading it meanwhile.
 */
export async function offerOpenLoop(
  producer: Producer,
  ratePerSec: number,
  total: number,
  t0: number,
  job: (i: number, dueMs: number) => BenchJob,
  progress: { committed: number } = { committed: 0 },
  batchMs = 0,
): Promise<Offered> {
  const intervalMs = 1000 / ratePerSec;
  const inflight = new Set<Promise<void>>();
  let errors = 0;
  let shed = 0;
  const send = (jobs: BenchJob[]) => {
    const p: Promise<void> = (jobs.length === 1 && batchMs === 0 ? producer.enqueueOne(jobs[0]) : producer.enqueueBatch(jobs))
      .then(() => void (progress.committed += jobs.length), () => void (errors += jobs.length))
      .finally(() => void inflight.delete(p));
    inflight.add(p);
  };
  for (let i = 0; i < total; ) {
    const now = wallMs();
    const batch: BenchJob[] = [];
    while (i < total && t0 + i * intervalMs <= now) {
      if (inflight.size >= MAX_IN_FLIGHT) shed++;
      else if (batchMs > 0) batch.push(job(i, t0 + i * intervalMs));
      else send([job(i, t0 + i * intervalMs)]);
      i++;
    }
    if (batch.length) send(batch);
    // A batch takes what fell due in the tick; one job at a time sleeps at most until the next one is due.
    const wait = batchMs > 0 ? now + batchMs - wallMs() : Math.min(1, t0 + i * intervalMs - wallMs());
    if (i < total) await systemClock.sleep(Math.max(0, wait));
  }
  await Promise.all(inflight);
  const committed = total - errors - shed;
  return { committed, errors, shed, achievedPerSec: committed / ((wallMs() - t0) / 1000) };
}
