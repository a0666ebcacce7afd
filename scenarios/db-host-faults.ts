import { defineScenario } from '../harness/scenario.ts';

/**
 * The database host misbehaves short of a crash, on the scenario's own
 * embedded Postgres (docs/network-faults.md): every server process paused
 * (SIGSTOP, a hypervisor's pause, a storage freeze), every connection slot
 * taken while the workers must reconnect (53300), the primary turned
 * read-only with its connections up (25006, as after a demotion or a managed
 * service's full-disk guard), and the jobs table locked, first outright and
 * then by a migration's DDL queued behind a long reader. Each lasts less
 * than a lease minus a heartbeat, so no lease need expire: no job may be
 * charged an attempt or a crash for any of it, read-only and full are
 * detected (db:error, stampede_worker_db_errors_total), and work resumes
 * within 5 s of each clearing. An operator keeps the dashboard's queues page
 * open throughout (read every 2 s): the outright lock lasts 10 s, past the
 * page's statement timeout (5 s) with 3 s to spare for the first read to
 * land in it, and a page held by it must answer once its timeout passes
 * rather than hang with the lock (dashboard-page-timeout).
 */
export default defineScenario({
  name: 'db-host-faults',
  description:
    "The database host short of a crash: all server processes paused, connection slots exhausted, the primary read-only with connections up, the jobs table locked (outright, and by a DDL queued behind a reader). No job charged, read-only and full detected, work resumes within 5 s of each clearing, and the dashboard's page answers a lock after its statement timeout.",
  seed: 43,
  durationS: 40,
  load: { model: 'poisson', rate: 80 },
  workers: 2,
  concurrency: 8,
  mix: [
    { kind: 'normal', share: 7, durationMs: { dist: 'lognormal', medianMs: 20, p99Ms: 200 } },
    { kind: 'effect', share: 3, durationMs: { dist: 'uniform', minMs: 10, maxMs: 40 } },
  ],
  // A 12 s lease: the outright lock (10 s) stays under a lease minus a heartbeat.
  engine: { leaseMs: 12_000, heartbeatMs: 1_000, pollMs: 100, rescueIntervalMs: 500, maxCrashes: 4, maxAttempts: 8 },
  faults: [
    { fault: 'db-pause', atS: 3, forS: 3 },
    { fault: 'connections-exhausted', atS: 9, forS: 3 },
    { fault: 'read-only', atS: 16, forS: 3 },
    { fault: 'lock-jobs-table', atS: 22, forS: 10 },
    { fault: 'lock-jobs-table', atS: 34, forS: 3, mode: 'ddl-behind-reader' },
  ],
  checkers: {
    'no-phantom-finish': true,
    'no-charge-for-db-faults': true,
    'recovers-after-heal': true,
    'dashboard-page-timeout': true,
  },
  thresholds: { oldestAgeSloMs: 10_000 },
  drainTimeoutS: 40,
});
