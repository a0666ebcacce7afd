import { defineScenario } from '../harness/scenario.ts';

/**
 * A payments API that serves 8 calls at once and answers 503 beyond that
 * (harness/runner/downstream.ts). Its queue has a global limit of 8 jobs in
 * flight, enforced by the claim across 3 workers of 16 slots each (48 slots:
 * six times what the API takes). The API's dependency fails for 2 s, so the
 * jobs of that moment fail together and come back as a retry storm, and a
 * herd of 200 payment jobs falls due at once on top of it: the source
 * document's thundering herd that re-saturates the dependency that just
 * failed. With the limit the API never sees more than 8 calls at once
 * (downstream-in-flight) and the queue recovers; without it (the
 * no-queue-limit mutant) the fleet sends up to 48 at once and the API
 * refuses most of them. Meanwhile an operator pauses the `reports` queue for
 * 3 s: nothing of it may start until the resume (paused-queue-idle), while
 * its jobs keep arriving. A third queue, `sends` (a mail provider's rate
 * limit), starts at most 10 jobs a second across the fleet: a herd of 40 of
 * them falls due at once, and the bucket, not the 48 free slots, sets the
 * pace (start-rate; compare --mutant no-start-rate).
 */
export default defineScenario({
  name: 'downstream-limit',
  description:
    'A herd and a retry storm hit a downstream of capacity 8 behind a queue limited to 8 jobs in flight across 48 worker slots: the downstream never sees more than 8 at once and the queue recovers; a second queue is paused for 3 s and starts nothing meanwhile. Compare --mutant no-queue-limit.',
  seed: 17,
  durationS: 12,
  load: { model: 'poisson', rate: 30 },
  workers: 3,
  concurrency: 16,
  lanes: [
    { queue: 'payments', priority: 0, share: 3 },
    { queue: 'reports', priority: 0, share: 1 },
    // Only the herd below: share 0 leaves the other lanes' arrivals as they were. Above them in priority: every claim
    // of the fleet draws sends' tokens up to what it may take, and at priority 0 a claim often locked payments or
    // reports jobs instead, wasting them (the herd started at half the rate).
    { queue: 'sends', priority: 5, share: 0 },
  ],
  mix: [
    { kind: 'downstream', share: 3, lanes: ['payments'] },
    { kind: 'normal', share: 1, lanes: ['reports'], durationMs: { dist: 'lognormal', medianMs: 5, p99Ms: 40 } },
  ],
  // 100 ms calls: 8 at once is at most 80 calls/s, so the fleet fills the limit even on a loaded machine.
  downstream: { capacity: 8, callMs: 100 },
  // sends: 10 starts/s, a bucket of 10 (docs/operating.md); the herd of 40 takes about 4 s to start, done about as the
  // payments herd comes. (With 80, and a sends lane of its own in the load, the payments backlog outlasted the load
  // by over 10 s: past the SLO.)
  queueLimits: { payments: { maxInFlight: 8 }, sends: { maxStartsPerSecond: 10 } },
  engine: { pollMs: 100, backoffBaseMs: 1_000, backoffCapMs: 8_000, maxAttempts: 10 },
  faults: [
    { fault: 'dependency-outage', atS: 3, forS: 2 },
    { fault: 'thundering-herd', atS: 3.5, count: 200, queue: 'payments', kind: 'downstream' },
    { fault: 'queue-pause', atS: 6, forS: 3, queue: 'reports' },
    { fault: 'thundering-herd', atS: 0.5, count: 40, queue: 'sends' },
  ],
  // The limit drains the herd at the downstream's pace, not the fleet's: the backlog is the incident, to the
  // load's end. (Ending it later left no sample outside it on a quiet machine: inconclusive.)
  incident: { fromS: 3, toS: 12 },
  // No effect jobs here: exactly-one-effect would have nothing to judge.
  checkers: { 'downstream-in-flight': { maxInFlight: 8 }, 'paused-queue-idle': true, 'oldest-age-slo': true, 'exactly-one-effect': false, 'start-rate': true },
  // 10 s: on the loaded 2-core machine the drain's tail reached 4.3 s of 5; generous, as timing figures here are pessimistic.
  thresholds: { oldestAgeSloMs: 10_000 },
  drainTimeoutS: 40,
});
