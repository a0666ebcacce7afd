import { defineScenario } from '../harness/scenario.ts';

/**
 * The database goes away under load: the postmaster SIGKILLed mid-load (an
 * OOM kill, a power cut: 2 s down, then crash recovery from the WAL), and later every engine connection terminated at once (a
 * pgbouncer restart, an idle-connection reaper, an operator's
 * pg_terminate_backend). Enqueues in flight when the server vanished have an
 * unknown outcome and are resolved by their idempotency key; claims and
 * completions retry; nothing acknowledged may be lost (durable-acknowledgements:
 * every enqueue and completion acknowledged before the crash survives it) and no
 * effect may be applied twice. Needs a server the run started itself (embedded or a
 * container): a server given by DATABASE_URL cannot be restarted, and the run
 * is then inconclusive.
 */
export default defineScenario({
  name: 'db-restart',
  description:
    'Postgres crashed (postmaster SIGKILLed) mid-load and restarted 2 s later with crash recovery (OOM kill, power cut) and later every engine connection terminated (a pooler restart, a connection reaper): unknown-outcome enqueues resolved by key, nothing acknowledged lost, exactly one effect.',
  seed: 71,
  durationS: 16,
  load: { model: 'poisson', rate: 200 },
  workers: 2,
  concurrency: 16,
  mix: [
    { kind: 'normal', share: 8, durationMs: { dist: 'lognormal', medianMs: 5, p99Ms: 50 } },
    { kind: 'effect', share: 2, durationMs: { dist: 'uniform', minMs: 5, maxMs: 20 } },
  ],
  engine: { leaseMs: 5_000, heartbeatMs: 1_000, pollMs: 100, rescueIntervalMs: 500, maxCrashes: 4 },
  // The crash comes after a lull: a herd of 2,000 jobs lands at 3.5 s, and from 4 s the producer is quiet
  // and the server's WAL writer stopped for 0.5 s while the workers drain it (harness/faults/inject/database.ts):
  // the last commits before the kill are the workers' own hundreds of claims and completions, each durable
  // only if its COMMIT waited for its own WAL flush (the async-commit mutant loses them; the fault's
  // evidence counts them).
  faults: [
    { fault: 'thundering-herd', atS: 3.5, count: 2_000 },
    { fault: 'db-restart', atS: 4, mode: 'crash', downS: 2, lullS: 0.5 },
    { fault: 'db-terminate-backends', atS: 13, scope: 'workers' },
  ],
  // Every done job has a completion by its holder (a reply lost with the connection is indeterminate, not a
  // phantom), and nothing acknowledged before the crash is undone by it. Redeliveries are judged elsewhere:
  // through a whole-server crash the workers' result writes retry and land, so there may be none to judge here.
  checkers: { 'no-phantom-finish': true, 'durable-acknowledgements': true },
  thresholds: { oldestAgeSloMs: 5_000 },
  drainTimeoutS: 45,
});
