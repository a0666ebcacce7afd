import type { ScheduleInput } from '../engine/cron/schedule.ts';
import { defineScenario } from '../harness/scenario.ts';
import { LIMIT_PANELS, SCHEDULED_JOB } from './background.ts';

/** The database clock's step: an hour, as a VM resumed after an hour's suspend, or NTP correcting an hour of drift. */
const JUMP_MS = 3_600_000;

/**
 * Many recurring schedules, as a real deployment carries: per-tenant minutely
 * rollups that catch up every missed minute (`all`), some that run only the
 * latest missed one (`latest`), and some that skip what they missed (`none`).
 * After the clock step each catches up under its own policy.
 */
const SCHEDULES: ScheduleInput[] = [
  ...Array.from({ length: 20 }, (_, i) => ({ id: `rollup-${i}`, cron: '* * * * *', queue: 'reports', catchUp: 'all' as const, payload: SCHEDULED_JOB })),
  ...Array.from({ length: 5 }, (_, i) => ({ id: `digest-${i}`, cron: '* * * * *', queue: 'reports', catchUp: 'latest' as const, payload: SCHEDULED_JOB })),
  ...Array.from({ length: 5 }, (_, i) => ({ id: `probe-${i}`, cron: '* * * * *', queue: 'reports', catchUp: 'none' as const, payload: SCHEDULED_JOB })),
];

/**
 * The incident from the source document. A payload that crashes its worker's
 * process on every attempt arrives; two seconds later the database host's clock
 * steps an hour forward, and with it the scheduler node's. Nothing is inserted
 * to make the herd: every delayed job, retry in backoff and cron row written
 * ahead whose run_at the step skipped over is due at that instant, and the
 * scheduler catches up the missed occurrences. Workers crash-loop on the poison
 * while the herd backs up the lane. The run must detect it (oldest-unclaimed-age
 * and dead-letter depth cross their thresholds), mitigate it (the poison is
 * convicted after maxCrashes and dead-lettered; aging keeps the low lane
 * moving) and recover (oldest age back under the SLO within the bound).
 */
export default defineScenario({
  name: 'poison-herd',
  description:
    'Poison pill + thundering herd from a clock step: a payload that crashes every worker that runs it, while the database clock steps an hour forward and every delayed job, retry and cron occurrence inside the hour falls due at once. Detect from oldest-unclaimed-age and DLQ depth, mitigate live, recover within the SLO bound.',
  seed: 7,
  durationS: 40,
  // The source document's rate. Seeds 1-3 in a row passed at 500 (2026-12-07, load average 16-19 on the shared
  // 2 cores, the generator achieving 294-388 jobs/s, recovered 6-18 s after the window); above load average
  // ~20 a seed may miss the 20 s recovery bound for want of CPU, as the code before the harness's cost was cut
  // did too (docs/harness.md, "What the harness costs"). The herd breaks the SLO.
  load: { model: 'poisson', rate: 500 },
  workers: 3,
  // 8 slots a worker: the herd drains at what the slots run (3 x 8 slots at the mix's ~6.4 ms mean: ~3,700 jobs/s,
  // less the 500/s arriving), not at what the machine's CPU allows. With 32, an idle machine drained the 24,000
  // in under 4 s, shorter than the SLO page's for: plus a scrape and an evaluation, so prometheus-alerts had no
  // breach long enough to judge (CI, 2026-12-07); a loaded one took 3.4-7 s. Bound by slots it takes ~7 s anywhere.
  concurrency: 8,
  lanes: [
    { queue: 'orders', priority: 5, share: 4 },
    { queue: 'reports', priority: 0, share: 1 },
  ],
  mix: [
    { kind: 'normal', share: 9, durationMs: { dist: 'lognormal', medianMs: 4, p99Ms: 40 } },
    { kind: 'effect', share: 1, durationMs: { dist: 'uniform', minMs: 2, maxMs: 8 } },
  ],
  // A 60 s backoff base: the preloaded retries wait out up to a minute, most of it inside the step.
  // 8 attempts (the source's "commonly 5-8") for the work; the poison's producer asked for more (below).
  engine: { leaseMs: 3_000, heartbeatMs: 1_000, pollMs: 200, maxAttempts: 8, maxCrashes: 2, agingMs: 1_000, backoffBaseMs: 60_000, backoffCapMs: 600_000 },
  scheduler: { nodes: [{ skewMs: 0 }], schedules: SCHEDULES },
  preload: [
    // Reminders due over the next 50 minutes: all inside the step. 24,000 (8 a second): with claim-ahead a
    // fleet drains 2,000 due jobs between two 1 s samples, so a herd that small is never seen as one.
    { origin: 'delayed', count: 24_000, queue: 'orders', dueInS: { fromS: 60, toS: 3_000 } },
    // Webhook deliveries whose first attempt failed just before: retries due within a minute.
    { origin: 'retry', count: 800, queue: 'orders' },
  ],
  faults: [
    // Webhook deliveries whose producer asked for 25 attempts (Sidekiq's default retry count): crash
    // detection must retire them after maxCrashes (2) all the same. A poison it misses crash-loops
    // through its whole budget, 25 x (lease + rescue) = about 2 minutes, so the fleet does not recover.
    { fault: 'poison-pill', atS: 8, count: 3, queue: 'orders', maxAttempts: 25 },
    { fault: 'db-clock-jump', atS: 10, jumpMs: JUMP_MS, target: 'scheduler:all' },
  ],
  // From the poison's arrival until the herd has drained and the last suspect ran alone.
  incident: { fromS: 8, toS: 30 },
  // Recovery measured 15-17 s after the window (bound 20 s) on 2 shared cores at load average ~30; see the README.
  thresholds: { oldestAgeSloMs: 2_000, deadLetterDepthAlert: 1 },
  checkers: {
    'oldest-age-slo': { maxRecoverMs: 20_000 },
    // Recovered means back to normal for good: age under the SLO and no worker dying of a job any more.
    'fleet-recovers': { maxRecoverMs: 20_000 },
    'dead-letter-routing': true,
    // Aging: reports (priority 0) trail orders (priority 5) by at most 5 x agingMs = 5 s, plus 2 s of claim cycles.
    fairness: { lowQueues: ['reports'], highQueues: ['orders'], maxLowWaitMs: 60_000, maxLowOverHighMs: 7_000 },
    // Detect: both alerts fire on the harness's own reading; recover: the age alert clears (dead letters stay).
    'declared-alerts': { mustFire: ['oldest-unclaimed-age', 'dead-letter-depth'], mustClear: ['oldest-unclaimed-age'] },
    'dead-letter-rows': true,
    // The poison's dead letters coded crash_loop.
    'dead-letter-codes': true,
    'sampler-agrees': true,
    // The poison with innocent jobs in flight beside it: suspects alone, conviction at exactly maxCrashes.
    'crash-loop-isolation': true,
    'no-early-takeover': true,
    'no-phantom-finish': true,
    // Nothing here runs out of its budget; what is judged is that the convicted poison died early only as a crash loop.
    'attempt-accounting': { minExhausted: 0 },
    'parameters-honoured': true,
    // The same incident through the rules operators deploy, in a real Prometheus (for: scaled 1/60):
    // the SLO page fires on the herd and resolves once it drains; dead-letter depth rising tickets.
    // The clock step expires every lease at once: overdue leases until the rescuer's next pass may outlast the scaled 5 s.
    'prometheus-alerts': {
      mustFire: ['StampedeOldestUnclaimedAgeOverSLO', 'StampedeDeadLetterDepthRising'],
      mustResolve: ['StampedeOldestUnclaimedAgeOverSLO'],
      mayFire: ['StampedeLeasesOverdue'],
    },
    'exported-metrics-agree': true,
    // No queue limits, no lease lost (crashes are rescued, not fenced), and the scheduler node serves no /metrics here.
    'dashboard-queries-live': { mayBeEmpty: [...LIMIT_PANELS, 'panel "Leases lost and expired per second" target A', 'panel "Clock skew by node"'] },
  },
  // A clean run drains in 1-4 s after the load here, and the recovery bound ends 10 s after it; a run whose
  // poison still crash-loops (no-crash-detection) is not kept waiting longer than this.
  drainTimeoutS: 20,
});
