import { defineScenario } from '../harness/scenario.ts';

const DAY_MS = 86_400_000;

/** The database clock's step: 9 days, past the archiver's default retention (7 days) and its 2 days ahead. */
const STEP_MS = 9 * DAY_MS;

/**
 * Retention by the day, on the database's calendar. The archiver runs at its
 * default retentionDays (7) and partitionsAheadDays (2): its first pass
 * creates today's day partition of stampede.job_history and the two after
 * it. Then the database host's clock steps 9 days forward (a VM resumed after
 * a long suspend, a host whose clock was set right after running on a stale
 * one): today's and tomorrow's partitions ended 8 and 7 days before the new
 * day began, past retention; the day after tomorrow's ended 6 days before it,
 * inside. The archiver's
 * next pass must drop the first two whole, keep the third, and create the
 * new today and two days ahead; archive-retention judges it from the
 * catalog, read by the harness before the step and once the archiver
 * stopped.
 *
 * The archiver archives a job 10 days after it finished (archiveAfterMs past
 * the step), so it moves none of the run's jobs: the partitions it drops hold
 * nothing any other invariant counts, and no-job-lost reads every job in the
 * hot table. Nothing here judges a wait or an age on the database clock (no
 * oldest-age SLO, no fairness), which a 9-day step would make meaningless.
 * Delayed jobs due inside the step become due at once: the fault's evidence.
 */
export default defineScenario({
  name: 'archive-retention',
  description:
    "The database clock steps 9 days forward under a running archiver at its default retention (7 days) and days ahead (2): the day partitions that ended 7 days before the new day are dropped whole, the one still inside retention is kept, and the new day's partitions ahead are created, as the harness reads them from the catalog.",
  seed: 41,
  durationS: 14,
  load: { model: 'constant', rate: 100 },
  workers: 2,
  concurrency: 8,
  lanes: [{ queue: 'default', priority: 0, share: 1 }],
  mix: [
    { kind: 'normal', share: 9, durationMs: { dist: 'lognormal', medianMs: 5, p99Ms: 50 } },
    { kind: 'effect', share: 1, durationMs: { dist: 'uniform', minMs: 2, maxMs: 10 } },
  ],
  engine: { leaseMs: 10_000, heartbeatMs: 3_000, pollMs: 200 },
  // Reminders due over the 9 days the step skips: due at once after it.
  preload: [{ origin: 'delayed', count: 50, queue: 'default', dueInS: { fromS: 3_600, toS: 8 * 86_400 } }],
  archiver: { archiveAfterMs: 10 * DAY_MS, intervalMs: 1_000 },
  faults: [{ fault: 'db-clock-jump', atS: 3, jumpMs: STEP_MS }],
  checkers: { 'archive-retention': true },
  drainTimeoutS: 20,
});
