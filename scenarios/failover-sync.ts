import type { FaultSpec } from '../harness/faults/spec.ts';
import { defineScenario, type ScenarioInput } from '../harness/scenario.ts';

/**
 * Both failovers hold the replication link for 2 s around a minute of the database clock placed at 11 s
 * of the load: the failover starts at 6 s and waits for it (onMinute), so a loaded machine that runs the
 * action up to 4 s late still holds the link around that minute.
 */
const FAILOVER_AT_S = 6;
const MINUTE_AT_S = 11;
const FAILOVER_LAG_S = 2;

/**
 * Both failover scenarios' faults: at the load's start the simulated database clock (docs/time.md) steps
 * forward under a minute, with both scheduler nodes' clocks, so that a minute of the database clock begins
 * in the middle of the lag window: the three minutely schedules' occurrences come due while the standby
 * lacks what the primary commits. Under async they run on the old primary, are lost with it and run again
 * on the promoted standby (cron occurrences fired twice); under sync their claims wait and run once.
 */
export function failoverFaults(replication: 'sync' | 'async'): FaultSpec[] {
  return [
    { fault: 'db-clock-jump', atS: 0, minuteAtS: MINUTE_AT_S, target: 'scheduler:all' },
    { fault: 'failover', atS: FAILOVER_AT_S, replication, lagS: FAILOVER_LAG_S, onMinute: true },
  ];
}

/** The load, fleet and engine both failover scenarios run: only the replication mode and the checks differ. */
export const FAILOVER_RUN: Partial<ScenarioInput> = {
  durationS: 22,
  load: { model: 'poisson', rate: 60 },
  workers: 2,
  concurrency: 8,
  mix: [
    { kind: 'normal', share: 6, durationMs: { dist: 'lognormal', medianMs: 20, p99Ms: 200 } },
    // Effects of a few hundred ms: several are inside their transaction when the primary dies (about 9 of the
    // 16 slots at 60 jobs/s), so a failover cuts effect transactions, not only claims and completions.
    { kind: 'effect', share: 4, durationMs: { dist: 'uniform', minMs: 150, maxMs: 600 } },
  ],
  engine: { leaseMs: 8_000, heartbeatMs: 1_000, pollMs: 100, rescueIntervalMs: 500, maxCrashes: 4, maxAttempts: 8 },
  // Two scheduler nodes through the same proxy: their occurrences are effect jobs keyed by the occurrence, so an
  // occurrence whose run the failover undid shows as its effect applied twice (a cron occurrence fired twice).
  // Minutely is the finest a schedule fires: failoverFaults places a minute of the database clock in the lag window.
  scheduler: {
    nodes: [{ skewMs: 0 }, { skewMs: 0 }],
    schedules: ['UTC', 'Asia/Kolkata', 'America/St_Johns'].map((timezone, i) => ({
      id: `failover-minutely-${i + 1}`,
      cron: '* * * * *',
      timezone,
      queue: 'default',
      payload: { kind: 'effect', params: { durationMs: 5 } },
    })),
  },
  thresholds: { oldestAgeSloMs: 10_000 },
  drainTimeoutS: 40,
};

/**
 * Failover to a synchronous standby (docs/failover.md). The run's embedded
 * Postgres streams to a standby the harness starts from the same binaries
 * (synchronous_standby_names names it, synchronous_commit on), and every
 * worker, the producers and the harness itself connect through the
 * harness's proxy, standing in for a virtual IP or pgbouncer. About 10 s
 * in, 1 s before a minute of the database clock (failoverFaults), the
 * replication link stops carrying WAL for 2 s (every commit now waits for
 * the standby), then the primary is SIGKILLed, the standby promoted and the
 * proxy re-pointed. Three cron occurrences come due inside those 2 s, while
 * commits wait. Every acknowledged enqueue, completion and effect must
 * be on the new primary (0 lost); the writes that were waiting are unknown
 * outcomes, retried; no job is charged for the failover.
 */
export default defineScenario({
  name: 'failover-sync',
  description:
    'The primary dies after its synchronous standby fell 2 s behind; the standby is promoted and the proxy every client uses re-pointed. 0 acknowledged enqueues, completions or effects lost; no job charged; work resumes after the promotion.',
  seed: 45,
  ...FAILOVER_RUN,
  faults: failoverFaults('sync'),
  checkers: {
    // The three occurrences due in the lag window must be there to judge: each runs once.
    'failover-sync': { minCronDue: 3 },
    'no-charge-for-db-faults': true,
    'no-phantom-finish': true,
    'one-job-per-cron-occurrence': true,
  },
});
