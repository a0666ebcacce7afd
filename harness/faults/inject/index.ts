import { schedulePause } from './schedules.ts';
import type { FaultName } from '../plan.ts';
import type { Injector } from './context.ts';
import { clockJump, clockRate, clockSkew, cronRewind, dst } from './clocks.ts';
import { dbClockJump } from './db-clock.ts';
import { dbRestart, poolExhaust, terminateBackends, xminHold } from './database.ts';
import { startDashboardCli } from './dashboard-cli.ts';
import { cancelJobs, cliTypos, deadLetterJobs, queuePause, redriveJobs, retryJobs, setLimits } from './control.ts';
import { dependencyOutage } from './dependency.ts';
import { enqueueRetry, poisonPill, thunderingHerd } from './enqueues.ts';
import { relayKill, workerRestart } from './components.ts';
import { workerKill, workerStop } from './processes.ts';
import { bandwidth, latency, partition, reset, resetAfterCommit } from './link.ts';
import { failover } from './failover.ts';
import { connectionsExhausted, dbPause, lockJobsTable, readOnly } from './host.ts';

/** Every fault the nemesis can inject, by the name scenarios use. */
export const INJECTORS: Record<FaultName, Injector> = {
  'worker-kill': workerKill,
  'worker-stop': workerStop,
  'clock-skew': clockSkew,
  'clock-jump': clockJump,
  'clock-rate': clockRate,
  dst,
  'cron-rewind': cronRewind,
  'db-clock-jump': dbClockJump,
  'poison-pill': poisonPill,
  'thundering-herd': thunderingHerd,
  'db-terminate-backends': terminateBackends,
  'db-restart': dbRestart,
  'pool-exhaust': poolExhaust,
  'xmin-hold': xminHold,
  'dependency-outage': dependencyOutage,
  'queue-pause': queuePause,
  'schedule-pause': schedulePause,
  cancel: cancelJobs,
  retry: retryJobs,
  'dead-letter': deadLetterJobs,
  redrive: redriveJobs,
  'set-limits': setLimits,
  'cli-typos': cliTypos,
  'dashboard-cli': startDashboardCli,
  'worker-restart': workerRestart,
  'relay-kill': relayKill,
  'enqueue-retry': enqueueRetry,
  partition,
  latency,
  bandwidth,
  reset,
  'reset-after-commit': resetAfterCommit,
  'db-pause': dbPause,
  'connections-exhausted': connectionsExhausted,
  'read-only': readOnly,
  'lock-jobs-table': lockJobsTable,
  failover,
};

export type { InjectionContext } from './context.ts';
