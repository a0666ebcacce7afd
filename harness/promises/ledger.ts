import type { PromiseEntry } from './types.ts';

/**
 * The promise ledger: every promise stampede documents, what it covers of the
 * documented surface, and what vouches for it (docs/promises.md). Kept equal
 * to the docs by test/promise-ledger.test.ts; judged per promise by the gate.
 *
 * `minJudged` is the least number of telling events the promise's pairs must
 * judge in one gate run. It is set well below what a default run judges (so a
 * loaded machine does not fail it) and well above zero (so a scenario that
 * stopped making the situation happen does).
 */
export const LEDGER: readonly PromiseEntry[] = [
  // ---- The README's guarantees -------------------------------------------------------------
  {
    id: 'enqueue-durable',
    promise: 'An enqueue that returned has committed: it survives a crash of Postgres, and so do acknowledged claims and completions.',
    documented: [
      { file: 'README.md', quote: 'Enqueue is durable when it returns.' },
      { file: 'README.md', quote: 'If it resolved, the job survives a crash of your process and of Postgres.' },
    ],
    covers: { seed: [1] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'db-restart', invariant: 'durable-acknowledgements' }], minJudged: 100, mutants: ['async-commit'] },
  },
  {
    id: 'no-job-lost',
    promise: 'Every acknowledged enqueue ends done or dead: none is lost, whatever the faults.',
    documented: [
      { file: 'README.md', quote: 'Every job ends done or dead.' },
      { file: 'README.md', quote: 'Enqueue is durable when it returns.' },
    ],
    covers: { seed: [1, 2] },
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'steady', invariant: 'no-job-lost' },
        { scenario: 'worker-crash', invariant: 'no-job-lost' },
        { scenario: 'db-restart', invariant: 'no-job-lost' },
        { scenario: 'poison-herd', invariant: 'no-job-lost' },
        { scenario: 'steady', invariant: 'queue-drained' },
        { scenario: 'worker-crash', invariant: 'queue-drained' },
      ],
      minJudged: 1_000,
      mutants: ['enqueue-key-truncated'],
    },
  },
  {
    id: 'redelivery-after-worker-death',
    promise: 'A job whose worker died runs again on another worker once its lease has expired on the database clock, and not before.',
    documented: [
      { file: 'README.md', quote: 'If the worker dies, the lease expires and another worker runs the job again.' },
      { file: 'README.md', quote: 'due-ness and lease expiry are decided by the database clock' },
    ],
    covers: { options: ['Worker.leaseMs', 'Worker.rescueIntervalMs', 'LeaseRescuer.intervalMs', 'LeaseRescuer.batchSize'], seed: [2] },
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'worker-crash', invariant: 'no-early-takeover' },
        { scenario: 'worker-crash', invariant: 'no-job-lost' },
        { scenario: 'slow-worker', invariant: 'no-early-takeover' },
      ],
      minJudged: 20,
      mutants: ['claim-steals-expiring-leases'],
    },
  },
  {
    id: 'one-holder-at-a-time',
    promise: 'No job is held by two workers at once, and no attempt is claimed twice.',
    documented: [{ file: 'README.md', quote: 'A job never runs on two workers at once by accident' }],
    covers: { seed: [2, 6] },
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'steady', invariant: 'no-concurrent-claim' },
        { scenario: 'worker-crash', invariant: 'no-concurrent-claim' },
      ],
      minJudged: 1_000,
      mutants: ['no-skip-locked'],
    },
  },
  {
    id: 'completion-fenced',
    promise: 'A worker that lost its lease writes nothing more: no completion, failure or renewal over the new holder.',
    documented: [
      { file: 'README.md', quote: 'completion is fenced on a per-claim lease token.' },
      { file: 'README.md', quote: 'cannot overwrite the result of the worker that took the job over' },
      { file: 'README.md', quote: "A worker whose clock runs slow against the database's learns it lost a job at its next renewal, which the fence refuses" },
      { file: 'docs/time.md', quote: 'What keeps the job\'s outcome safe is the fence, not the deadline' },
    ],
    covers: { seed: [2] },
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'slow-worker-no-heartbeat', invariant: 'no-stale-completion' },
        { scenario: 'worker-crash', invariant: 'lease-fencing' },
        // A worker whose clock runs slow renews after its job was taken over: the race provoked on purpose.
        { scenario: 'slow-clock', invariant: 'lease-fencing' },
        { scenario: 'slow-worker-no-heartbeat', invariant: 'no-phantom-finish' },
      ],
      minJudged: 10,
      mutants: ['no-fencing', 'rescue-finishes-live-holder', 'renewal-unfenced'],
    },
  },
  {
    id: 'heartbeats-keep-leases',
    promise: "A running job's lease is renewed every heartbeatMs to leaseMs ahead, and retries wait what the worker's settings say.",
    documented: [
      { file: 'docs/configuration.md', quote: 'lease renewal period; 0 turns heartbeats off' },
      { file: 'docs/configuration.md', quote: 'visibility timeout of a claim' },
    ],
    covers: { options: ['Worker.heartbeatMs', 'Worker.queues'], seed: [2] },
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'slow-worker', invariant: 'parameters-honoured' },
        { scenario: 'steady', invariant: 'parameters-honoured' },
        { scenario: 'poison-herd', invariant: 'parameters-honoured' },
      ],
      minJudged: 50,
      mutants: ['renewal-doubles-lease'],
    },
  },
  {
    id: 'effect-exactly-once',
    promise: 'A handler that uses effectOnce applies its effect exactly once per idempotency key, however often the job is delivered.',
    documented: [
      { file: 'README.md', quote: 'Effects happen exactly once when the handler uses ctx.effectOnce' },
      { file: 'README.md', quote: 'A replay finds the key and does nothing.' },
    ],
    covers: { seed: [5] },
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'slow-worker-no-heartbeat', invariant: 'exactly-one-effect' },
        { scenario: 'steady', invariant: 'exactly-one-effect' },
        { scenario: 'worker-crash', invariant: 'exactly-one-effect' },
      ],
      minJudged: 50,
      mutants: ['dedup-outside-tx'],
    },
  },
  {
    id: 'effect-no-lock-wait',
    promise: "A retry never waits behind a frozen holder's open effect while holding its claim: it is handed back uncharged.",
    documented: [{ file: 'docs/job-life-checks.md', quote: 'no-effect-lock-wait' }],
    covers: { seed: [5] },
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'slow-worker-no-heartbeat', invariant: 'no-effect-lock-wait' },
        // The deferred retries claimed again: each with the attempt number of the claim deferred (uncharged).
        { scenario: 'slow-worker-no-heartbeat', invariant: 'attempt-accounting' },
      ],
      minJudged: 1,
      mutants: ['effect-lock-wait', 'defer-charges-attempt'],
    },
  },
  {
    id: 'outbox-delivers',
    promise: "Every intent of a committed effect reaches its receiver at least once, by key; no intent of a rolled-back attempt is ever sent.",
    documented: [
      { file: 'README.md', quote: 'Effects outside Postgres go through the outbox' },
      { file: 'docs/effects.md', quote: 'An outbox for effects outside Postgres' },
    ],
    covers: {
      options: ['OutboxRelay.topics', 'OutboxRelay.batchSize', 'OutboxRelay.pollMs', 'OutboxRelay.leaseMs', 'OutboxRelay.deliveryTimeoutMs', 'OutboxRelay.backoffBaseMs', 'OutboxRelay.backoffCapMs'],
      seed: [5],
    },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'effects-pipeline', invariant: 'outbox-delivery' }], minJudged: 20, mutants: ['relay-marks-at-claim', 'effect-autocommit'] },
  },
  {
    id: 'retries-full-jitter',
    promise: 'After a shared outage, jobs that failed together do not come due together again: retries wait random(0, min(cap, base·2^(n−1))).',
    documented: [
      { file: 'README.md', quote: 'A failing job retries with exponential backoff and full jitter' },
      { file: 'docs/configuration.md', quote: 'retry ceilings: min(cap, base·2^(n−1)), full jitter' },
    ],
    covers: { options: ['Worker.backoffBaseMs', 'Worker.backoffCapMs'], seed: [3] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'retry-storm', invariant: 'retry-spread' }], minJudged: 50, mutants: ['no-jitter'] },
  },
  {
    id: 'jitter-uniform-window',
    promise: 'Full jitter is uniform over its whole window: the wait before retry n is random(0, min(cap, base·2^(n−1))), not merely under the cap.',
    documented: [{ file: 'docs/configuration.md', quote: 'retry ceilings: min(cap, base·2^(n−1)), full jitter' }],
    // The backoff options and the seed's paragraph are retries-full-jitter's to cover; this is its distribution.
    covers: {},
    vouch: { by: 'gate', judgedBy: [{ scenario: 'retry-storm', invariant: 'jitter-uniform' }], minJudged: 100, mutants: ['equal-jitter'] },
  },
  {
    id: 'budget-then-dead-letter',
    promise: 'Attempts are charged once per claim; a job out of budget is dead with its whole error history and a dead-letter row, and never earlier.',
    documented: [
      { file: 'README.md', quote: 'after its attempt budget it moves to the dead-letter table with its whole error history' },
      { file: 'docs/engine.md', quote: 'Attempts are charged at claim time, so a handler that kills its process still uses one up.' },
    ],
    covers: { options: ['enqueue.maxAttempts'], seed: [3] },
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'slow-worker', invariant: 'attempt-accounting' },
        { scenario: 'poison-herd', invariant: 'attempt-accounting' },
        { scenario: 'poison-herd', invariant: 'dead-letter-routing' },
        { scenario: 'poison-herd', invariant: 'dead-letter-rows' },
        { scenario: 'retry-storm', invariant: 'dead-letter-routing' },
      ],
      minJudged: 50,
      mutants: ['fail-one-over-budget', 'charge-on-failure', 'no-dead-letter-row'],
    },
  },
  {
    id: 'queue-attempt-budget',
    promise: "A job that gives no maxAttempts takes its queue's budget (setQueueMaxAttempts), else the default; a job's own maxAttempts wins.",
    documented: [{ file: 'docs/engine.md', quote: "`setQueueMaxAttempts(db, queue, n)`; a job's own `maxAttempts` wins." }],
    covers: { options: ['Queue.maxAttempts'] },
    // retry-storm sets its queue's budget before the load and its generator's jobs give none; attempt-accounting then
    // judges each job against the budget on its row, and this judges that row's budget against what was promised.
    vouch: { by: 'gate', judgedBy: [{ scenario: 'retry-storm', invariant: 'attempt-budget-as-set' }], minJudged: 100, mutants: ['enqueue-ignores-queue-budget'] },
  },
  {
    id: 'crash-loop-convicted',
    promise: 'A job that keeps killing its worker is convicted after maxCrashes crashes and dead-lettered early; suspects run alone, so no innocent job is convicted, and an expired lease of a live worker is no crash.',
    documented: [
      { file: 'README.md', quote: 'A job that keeps killing its worker process is recognised after maxCrashes crashes' },
      { file: 'README.md', quote: 'without convicting the innocent jobs that shared the crashed process' },
    ],
    covers: { options: ['Worker.maxCrashes', 'LeaseRescuer.maxCrashes', 'Worker.livenessMs', 'Worker.suspectPatienceMs', 'LeaseRescuer.restartGraceMs'], seed: [3, 6] },
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'poison-herd', invariant: 'crash-loop-isolation' },
        { scenario: 'worker-crash', invariant: 'crash-loop-isolation' },
        { scenario: 'slow-worker-no-heartbeat', invariant: 'crash-loop-isolation' },
      ],
      minJudged: 10,
      mutants: ['suspects-in-batches', 'crash-on-any-expiry'],
    },
  },
  {
    id: 'dead-holder-charged',
    promise:
      "A job whose worker died holding it is charged a crash when its lease is taken back, also when a process restarted under the dead one's worker id renews that id's liveness row before the lease runs out.",
    documented: [
      { file: 'README.md', quote: 'A worker restarted under the same `--worker-id` does not' },
      { file: 'docs/crash-accounting.md', quote: 'a row of a later incarnation (started after the lease was last written: the process was restarted under the same id)' },
    ],
    covers: {},
    // worker-crash runs each slot's processes under one worker id (reuseWorkerIds): its kills are restarted within a second, before the 2 s leases end.
    vouch: { by: 'gate', judgedBy: [{ scenario: 'worker-crash', invariant: 'killed-holder-charged' }], minJudged: 5, mutants: ['restart-vouches-for-predecessor'] },
  },
  {
    id: 'poison-herd-recovers',
    promise: 'After a poison-pill incident with a thundering herd, the fleet recovers within its bound: oldest-unclaimed-age back under the SLO and no worker dying of a job.',
    documented: [{ file: 'README.md', quote: 'within 0.4 s of the declared incident window the age is back under the SLO and no worker crashes any more' }],
    covers: { seed: [6] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'poison-herd', invariant: 'fleet-recovers' }], minJudged: 1, mutants: ['no-crash-detection'] },
  },
  {
    id: 'due-by-database-clock',
    promise: 'No attempt is claimed before its run_at on the database clock: retries in backoff, delayed jobs and rows written ahead all wait.',
    documented: [{ file: 'README.md', quote: 'due-ness and lease expiry are decided by the database clock, never a worker' }],
    covers: { options: ['enqueue.runAt', 'enqueue.delayMs'], seed: [1, 4] },
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'slow-worker', invariant: 'no-early-start' },
        { scenario: 'retry-storm', invariant: 'no-early-start' },
      ],
      minJudged: 20,
      mutants: ['claim-ignores-backoff'],
    },
  },
  {
    id: 'cron-one-job-per-occurrence',
    promise: 'Each cron occurrence becomes exactly one job at its instant, however many scheduler nodes compute it and however skewed their clocks.',
    documented: [
      { file: 'README.md', quote: 'Each cron occurrence has a deterministic key, so two schedulers computing the same minute produce one job.' },
      { file: 'README.md', quote: 'A scheduler node whose clock is ahead only writes rows early; they still run on time.' },
    ],
    covers: { options: ['CronMaterializer.tickMs', 'CronMaterializer.lookaheadMs'], seed: [4] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'cron-skew', invariant: 'one-job-per-cron-occurrence' }], minJudged: 5, mutants: ['cron-key-spelling'] },
  },
  {
    id: 'cron-skew-refusal',
    promise: 'A scheduler node further off the database clock than its tolerance refuses and writes nothing; a node within it never refuses.',
    documented: [{ file: 'README.md', quote: 'A node too far off the database clock refuses to schedule.' }],
    covers: { options: ['CronMaterializer.maxSkewMs'], seed: [4] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'cron-skew', invariant: 'cron-skew-refusal' }], minJudged: 1, mutants: ['db-clock-as-wall-time'] },
  },
  {
    id: 'aging-no-starvation',
    promise: 'Priorities age: a saturated high lane cannot starve a low one beyond the documented wait bound.',
    documented: [
      { file: 'README.md', quote: 'priorities age, so a saturated high lane cannot starve a low one.' },
      { file: 'docs/configuration.md', quote: 'priority aging: (q − p)·agingMs of waiting equals q − p levels' },
    ],
    covers: { options: ['Worker.agingMs', 'enqueue.priority'], seed: [6] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'priority-starvation', invariant: 'fairness' }], minJudged: 20, mutants: ['no-aging'] },
  },
  {
    id: 'higher-priority-first',
    promise: 'At every claim the best effective priority (priority aged by its wait) is taken first: no due, unclaimed job of a better score is passed over.',
    documented: [{ file: 'docs/engine.md', quote: 'the claim ranks due jobs by an effective priority that rises with waiting time' }],
    covers: { options: ['Worker.agingMs', 'enqueue.priority'], seed: [6] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'priority-starvation', invariant: 'priority-order' }], minJudged: 200, mutants: ['claim-priority-inverted'] },
  },
  // ---- Signals: RED, depth, oldest-unclaimed-age, alerts --------------------------------------
  {
    id: 'oldest-age-slo-holds',
    promise: 'At the defaults and the seed rate, the oldest unclaimed job stays within the SLO outside a declared incident.',
    documented: [{ file: 'docs/scenarios.md', quote: 'steady' }],
    covers: { options: ['Worker.concurrency', 'Worker.claimAhead'], seed: [1, 6] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'steady', invariant: 'oldest-age-slo' }], minJudged: 5, mutants: ['lane-probe-skips-priority-0'] },
  },
  {
    id: 'queue-state-truthful',
    promise: "The engine's queue-state sampler reports what the database holds: depth by state, due, claimed, dead letters and oldest-unclaimed-age.",
    documented: [{ file: 'docs/metrics.md', quote: 'Queue state and Postgres health' }],
    covers: { options: ['QueueStateSampler.intervalMs', 'QueueStateSampler.roundRowBudget', 'QueueStateSampler.doneCount', 'QueueStateSampler.statementTimeoutMs'], seed: [3, 6] },
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'priority-starvation', invariant: 'sampler-agrees' },
        { scenario: 'retry-storm', invariant: 'sampler-agrees' },
        { scenario: 'steady', invariant: 'sampler-agrees' },
        // Issue 47: during poison-herd's herd (24,000 rows due at once, past the round's row budget) every sample's oldest
        // age and exact figures must equal the harness's reading in the same snapshot, and estimated depths stay within
        // estimateError of the true depth. The alert crossings on the engine's gauges are prometheus-alerts' (alert-rules-page-on-time).
        { scenario: 'poison-herd', invariant: 'sampler-agrees' },
      ],
      minJudged: 5,
      mutants: ['oldest-age-priority-blind', 'depth-ignores-retries'],
    },
  },
  {
    id: 'red-metrics-truthful',
    promise: "Each worker's RED series on /metrics count what that worker did: claims, completions, failures, dead letters, leases lost and expired, durations.",
    documented: [{ file: 'docs/metrics.md', quote: 'RED on the worker loop' }],
    covers: { seed: [6] },
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'retry-storm', invariant: 'red-metrics' },
        { scenario: 'worker-crash', invariant: 'red-metrics' },
      ],
      minJudged: 100,
      mutants: ['failures-counted-as-completions', 'rescues-uncounted'],
    },
  },
  {
    id: 'alerts-fire-and-clear',
    promise: 'In an incident the oldest-age and dead-letter alerts fire, and they clear once the backlog drains.',
    documented: [{ file: 'README.md', quote: 'its alert fires 3 s after the first fault' }],
    covers: { seed: [6] },
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'poison-herd', invariant: 'declared-alerts' },
        { scenario: 'poison-herd', invariant: 'oldest-age-slo' },
      ],
      minJudged: 2,
      mutants: ['claim-recent-only'],
    },
  },
  {
    id: 'one-sampler-per-database',
    promise: 'Workers that sample queue state elect one sampler between them: N workers cost one round per interval, and another takes over when it stops.',
    documented: [{ file: 'docs/metrics.md', quote: 'advisory lock' }],
    covers: { options: ['QueueStateSampler.elect'] },
    // worker-crash's 3 workers run --sample-queue-state; its kills end the leader's process, and the election moves.
    vouch: { by: 'gate', judgedBy: [{ scenario: 'worker-crash', invariant: 'one-round-per-interval' }], minJudged: 3, mutants: ['sampler-lock-per-transaction'] },
  },
  // ---- Judging other engines (docs/peers.md) ------------------------------------------------
  {
    id: 'peer-not-promised',
    promise: 'Run against another engine (--engine, --engines), an invariant resting on a promise that engine does not make reports "not promised": never pass, never fail, left out of the verdict.',
    documented: [{ file: 'docs/peers.md', quote: 'An invariant resting on a promise the engine does not make answers not promised' }],
    covers: {},
    vouch: {
      by: 'test',
      file: 'test/peers.test.ts',
      tests: [
        'reports "not promised" for a peer without the promise, never pass or fail, even over a history that breaks it',
        'negative control: the same history fails the invariant for an engine that makes the promise',
      ],
      notInGate: "The gate judges stampede, which makes every promise the invariants rest on; the fourth outcome appears only in a peer's run, and a peer is a package the gate does not install.",
    },
  },
  {
    id: 'peer-released-at-stop',
    promise:
      "Run against another engine, a worker stopped gracefully (SIGTERM) that still runs jobs when its grace ends must hand them back: a job it left held, never run again, is a released-at-stop violation naming the job and the engine's own error.",
    documented: [{ file: 'docs/peers.md', quote: 'a job a stopped worker left held, never run again and still claimed at the end, is a violation' }],
    covers: {},
    vouch: {
      by: 'test',
      file: 'test/peers-stop.test.ts',
      tests: [
        'flags a job a stopped worker held that nobody ran again and that ends still claimed',
        '0.17.2 leaves jobs held at a graceful stop locked (released-at-stop VIOLATED); 0.17.3 releases them and they rerun, at the same seed',
        'holds when the held job is claimed again by another worker, or ends done',
      ],
      invariants: ['released-at-stop'],
      notInGate:
        "A peer's graceful stop, shown by a known bug of graphile-worker 0.17.2 against 0.17.3 (npm aliases the gate does not install); stampede's own graceful stop is graceful-hand-back's, in the gate.",
    },
  },
  // ---- What operators deploy: the shipped alert rules and dashboard, in a real Prometheus ----------
  {
    id: 'alert-rules-page-on-time',
    promise: 'The shipped alert rules, evaluated by a real Prometheus on what it scrapes, page within their bound after the condition starts, resolve within their bound after recovery, and page nobody in a steady run.',
    documented: [{ file: 'docs/metrics.md', quote: '`ops/prometheus/alerts.test.yml` holds the rules\' unit tests' }],
    covers: { seed: [3, 6] },
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'poison-herd', invariant: 'prometheus-alerts' },
        { scenario: 'steady', invariant: 'prometheus-alerts' },
      ],
      minJudged: 100,
      mutants: ['slo-rule-in-ms'],
    },
  },
  {
    id: 'exported-metrics-truthful',
    promise: 'What Prometheus scrapes is what happened: queue-state gauges at every scrape, each worker’s RED counters, and duration quantiles within a bucket.',
    documented: [{ file: 'docs/metrics.md', quote: 'at every scrape, the gauges (depth by state, oldest-unclaimed-age, dead-letter depth, paused) equal' }],
    covers: { seed: [6] },
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'poison-herd', invariant: 'exported-metrics-agree' },
        { scenario: 'steady', invariant: 'exported-metrics-agree' },
      ],
      minJudged: 100,
      mutants: ['depth-labels-swapped'],
    },
  },
  {
    id: 'dashboard-queries-live',
    promise: 'Every query of the shipped Grafana dashboard parses in Prometheus, selects only metrics that exist, and returns data.',
    documented: [{ file: 'docs/metrics.md', quote: 'every query of `ops/grafana/stampede.json` parses in Prometheus' }],
    covers: {},
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'poison-herd', invariant: 'dashboard-queries-live' },
        { scenario: 'steady', invariant: 'dashboard-queries-live' },
      ],
      minJudged: 20,
      mutants: ['panel-on-renamed-metric'],
    },
  },
  {
    id: 'alert-rules-unit-tested',
    promise: 'Every shipped alert rule has a firing and a quiet promtool test, and they pass.',
    documented: [{ file: 'docs/metrics.md', quote: 'holds the rules\' unit tests' }],
    covers: {},
    vouch: {
      by: 'test',
      file: 'test/metrics-rules.test.ts',
      tests: ['passes the shipped rule tests: a firing and a quiet case for every rule', 'negative control: the same tests fail on the rules with the SLO threshold written in ms'],
      notInGate: 'A static artifact\'s unit tests (promtool over the shipped rules): no runtime behaviour; how the rules page on a real run is alert-rules-page-on-time\'s, in the gate.',
    },
  },
  // ---- Operator controls -------------------------------------------------------------------
  {
    id: 'queue-in-flight-limit',
    promise: "A queue's global in-flight limit holds across every worker: the downstream never sees more calls at once.",
    documented: [{ file: 'README.md', quote: 'are enforced by the claim across every worker' }],
    covers: { options: ['Queue.maxInFlight'], verbs: ['control.set-limits'] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'downstream-limit', invariant: 'downstream-in-flight' }], minJudged: 50, mutants: ['no-queue-limit'] },
  },
  {
    id: 'pause-is-exact',
    promise: 'A paused queue starts no job between the pause and the resume, in the ordinary and the suspect claim alike.',
    documented: [{ file: 'docs/operating.md', quote: 'A paused queue is claimed by no worker' }],
    covers: { verbs: ['control.pause', 'control.resume'] },
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'downstream-limit', invariant: 'paused-queue-idle' },
        // A pause that holds a suspect: the suspects' claim path must honour it too.
        { scenario: 'operator-chaos', invariant: 'paused-queue-idle' },
      ],
      minJudged: 1,
      mutants: ['no-pause-filter', 'suspect-claim-ignores-pause'],
    },
  },
  {
    id: 'start-rate-limit',
    promise: "A queue's start-rate limit holds across every worker: at most burst + rate·T starts in any T seconds.",
    documented: [{ file: 'docs/operating.md', quote: 'at most `burst + rate x T` starts in any T seconds' }],
    covers: { options: ['Queue.maxStartsPerSecond'] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'downstream-limit', invariant: 'start-rate' }], minJudged: 20, mutants: ['no-start-rate'] },
  },
  {
    id: 'per-key-cap',
    promise: "A queue's per-key cap holds across every worker and through worker kills: no tenant holds more of its jobs in flight at once.",
    documented: [{ file: 'docs/operating.md', quote: 'no key has more than `maxInFlightPerKey` of its jobs claimed at once' }],
    covers: { options: ['Queue.maxInFlightPerKey', 'enqueue.fairnessKey'] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'noisy-tenant', invariant: 'per-key-limit' }], minJudged: 20, mutants: ['no-per-key-limit'] },
  },
  {
    id: 'tenant-fair-share',
    promise: "In a fair queue one tenant's flood does not make the other tenants' jobs wait behind it: every key with a job due gets its turn within one walk of the keys.",
    documented: [{ file: 'docs/operating.md', quote: "a flood of one key delays another key's job by at most one turn of the keys" }],
    covers: {},
    vouch: { by: 'gate', judgedBy: [{ scenario: 'noisy-tenant', invariant: 'tenant-fairness' }], minJudged: 50, mutants: ['claim-ignores-keys'] },
  },
  {
    id: 'sequential-keys',
    promise: "In a sequential queue each key's jobs run one at a time in enqueue order, across workers and kills: a retry or a crashed job's rerun comes before the key's next job.",
    documented: [{ file: 'docs/operating.md', quote: "a key's next job starts only once the job before it is done, dead or cancelled" }],
    covers: { options: ['Queue.sequential'] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'noisy-tenant', invariant: 'sequence-order' }], minJudged: 20, mutants: ['sequence-ignores-head'] },
  },
  {
    id: 'trace-context',
    promise: "A job's attempts continue the trace that enqueued it: the first attempt's span is a child of the enqueuing context, a retry's is linked to it, and the handler's spans are the attempt's children.",
    documented: [{ file: 'docs/operating.md', quote: 'the first attempt is a child of the context that enqueued the job' }],
    covers: { options: ['enqueue.traceparent'] },
    vouch: {
      by: 'gate',
      // slow-worker's traced enqueues and workers with the OpenTelemetry SDK (its \`tracing\`): about 350 attempt spans,
      // 65 of them retries, and as many handler spans in a default run. A malformed traceparent refused at enqueue is
      // bad input, still test/tracing.test.ts's.
      judgedBy: [{ scenario: 'slow-worker', invariant: 'trace-continued' }],
      minJudged: 200,
      mutants: ['claim-drops-trace-context'],
    },
  },
  {
    id: 'otel-red-metrics',
    promise:
      "With a MeterProvider registered, each worker's claims, attempt durations and failures (by error.type), and the sampler's depth and oldest age, are recorded through OpenTelemetry's metrics API, counting what the database ran; without one nothing is bound.",
    documented: [{ file: 'docs/metrics.md', quote: 'each Worker also records its RED through `metrics.getMeter(\'stampede-queue\')`' }],
    covers: {},
    vouch: {
      by: 'gate',
      // slow-worker's workers register a MeterProvider (its \`otel\`), collected every second: about 80 collections in a
      // default run, each per queue against the worker's own claims, completions and failures before it. The sampler's
      // gauges and "nothing bound without a provider" stay test/otel-metrics.test.ts's.
      judgedBy: [{ scenario: 'slow-worker', invariant: 'otel-counts-agree' }],
      minJudged: 30,
      mutants: ['otel-failures-as-successes'],
    },
  },
  {
    id: 'key-weights',
    promise: "A key's weight is its share of each turn: a key of weight 3 is offered three jobs for every one of a key of weight 1, whatever size the queue's claims are.",
    documented: [{ file: 'docs/operating.md', quote: 'Each turn offers a key up to `weight` of its jobs' }],
    covers: { options: ['Queue.keyWeight'], verbs: ['control.set-key-weight'] },
    // weighted-tenants: floods of weights 3 and 1 in one fair queue whose cap is above the slots, claimed 1-2 jobs at a
    // time (smaller than a turn: where 0016's per-claim shares gave the heavy key every job); test/fair-turns.test.ts
    // holds the bound in claims of 1, 2, 3 and 40.
    vouch: { by: 'gate', judgedBy: [{ scenario: 'weighted-tenants', invariant: 'weighted-share' }], minJudged: 5, mutants: ['fair-pick-per-claim'] },
  },
  // ---- Components: archiver, pruner, shutdown, idempotent enqueue, wake-up -----------------
  {
    id: 'archive-moves-once',
    promise: 'Every job ends in exactly one of jobs and job_history; only done jobs older than the archiver’s age move.',
    documented: [{ file: 'docs/job-life-checks.md', quote: 'archive-once' }],
    covers: { options: ['JobArchiver.archiveAfterMs', 'JobArchiver.batchSize', 'JobArchiver.maxBatchesPerRun', 'JobArchiver.intervalMs'] },
    vouch: {
      by: 'gate',
      // operator-chaos: the archiver beside dead and cancelled jobs it must leave.
      judgedBy: [{ scenario: 'effects-pipeline', invariant: 'archive-once' }, { scenario: 'operator-chaos', invariant: 'archive-once' }],
      minJudged: 20,
      mutants: ['archive-too-young', 'archive-dead-jobs'],
    },
  },
  {
    id: 'prune-after-retention',
    promise: 'The pruner deletes a dedup key only after its retention, so a replay inside the retention is still recognised.',
    documented: [{ file: 'docs/effects.md', quote: 'so the dedup store and the outbox do not grow forever' }],
    covers: { options: ['Pruner.retentionMs', 'Pruner.batchSize', 'Pruner.intervalMs'], seed: [5] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'effects-pipeline', invariant: 'prune-retention' }], minJudged: 1, mutants: ['prune-ignores-retention'] },
  },
  {
    id: 'graceful-hand-back',
    promise: 'A worker stopped gracefully hands its unfinished jobs back uncharged; they rerun at once and nothing stays claimed.',
    documented: [{ file: 'docs/configuration.md', quote: 'how long in-flight jobs may finish after stop()' }],
    covers: { options: ['Worker.shutdownGraceMs'] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'effects-pipeline', invariant: 'hand-back' }], minJudged: 1, mutants: ['release-charges-attempt'] },
  },
  // ---- The link and the database host (docs/network-faults.md) ------------------------------
  {
    id: 'recovery-after-heal',
    promise: 'After a partition heals or a database-host fault ends, no job stays stuck with a cut-off worker: each moves again within a rescue interval and a slack.',
    documented: [{ file: 'docs/network-faults.md', quote: 'no job stays stuck with a cut-off worker' }],
    covers: {},
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'network-partition', invariant: 'recovers-after-heal' },
        { scenario: 'db-host-faults', invariant: 'recovers-after-heal' },
      ],
      minJudged: 10,
      mutants: ['expired-claim-kept'],
    },
  },
  {
    id: 'cut-off-handler-aborted',
    promise:
      'A worker cut off from Postgres aborts its handler before its lease can have ended, counted from the send of the statement that last wrote it (not its answer), so no two holders run a job at once across a partition; a job claimed ahead and waiting for a slot is given up then and handed back at once, and none starts once its lease may have ended.',
    documented: [{ file: 'docs/network-faults.md', quote: 'A worker cut off from Postgres aborts its handler before its lease ends' }],
    covers: {},
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'network-partition', invariant: 'handler-aborted-on-lease-loss' },
        { scenario: 'network-partition', invariant: 'no-concurrent-claim' },
      ],
      minJudged: 200,
      mutants: ['heartbeat-failure-ignored', 'lease-end-from-answer'],
    },
  },
  {
    id: 'unknown-outcome-resolved',
    promise: 'A write whose answer was lost after its commit is resolved without loss or duplicate: a re-sent enqueue returns the first job, a lost completion is neither rerun nor charged, an effect applies once.',
    documented: [{ file: 'docs/network-faults.md', quote: 'A write whose answer was lost after its commit is resolved without loss or duplicate' }],
    covers: {},
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'network-partition', invariant: 'unknown-outcome-resolved' },
        { scenario: 'network-partition', invariant: 'idempotent-enqueue' },
      ],
      minJudged: 3,
      mutants: ['resend-ignores-key'],
    },
  },
  {
    id: 'no-charge-for-db-faults',
    promise: 'A paused, read-only, full or locked database charges no job an attempt or a crash; read-only and exhausted connections are detected (a log line, stampede_worker_db_errors_total), and work resumes once it clears.',
    documented: [
      { file: 'docs/network-faults.md', quote: 'A paused, read-only, full or locked database charges no job an attempt or' },
      { file: 'docs/network-faults.md', quote: 'Database errors are counted and logged by kind.' },
    ],
    covers: {},
    vouch: { by: 'gate', judgedBy: [{ scenario: 'db-host-faults', invariant: 'no-charge-for-db-faults' }], minJudged: 200, mutants: ['db-error-charged'] },
  },
  // ---- Failover to a replica (docs/failover.md) ------------------------------------------------
  {
    id: 'failover-sync-no-loss',
    promise: 'With synchronous replication, every acknowledged enqueue, completion and effect survives a failover to the standby: 0 lost.',
    documented: [{ file: 'docs/failover.md', quote: 'Synchronous replication: every acknowledged write survives the failover.' }],
    covers: {},
    vouch: { by: 'gate', judgedBy: [{ scenario: 'failover-sync', invariant: 'failover-sync' }], minJudged: 1_000, mutants: ['commit-local'] },
  },
  {
    id: 'failover-async-loss-listed',
    promise: 'With asynchronous replication, every acknowledged write a failover loses is listed by id and kind, falls inside the lag measured at the promotion, and the lost enqueues equal an independent SQL count on the promoted primary.',
    documented: [{ file: 'docs/failover.md', quote: 'Asynchronous replication: what is lost is bounded by the replica' }],
    covers: {},
    vouch: { by: 'gate', judgedBy: [{ scenario: 'failover-async', invariant: 'failover-async' }], minJudged: 1_000, mutants: ['completion-acked-unwritten'] },
  },
  {
    id: 'failover-no-charge',
    promise: 'A failover charges no job an attempt: the engine retries its statements until the address reaches the new primary.',
    documented: [{ file: 'docs/failover.md', quote: 'The failover charges no job an attempt.' }],
    covers: {},
    vouch: {
      by: 'gate',
      judgedBy: [{ scenario: 'failover-sync', invariant: 'no-charge-for-db-faults' }],
      minJudged: 20,
      mutants: ['lost-connection-charged'],
    },
  },
  {
    id: 'handlers-within-concurrency',
    promise: 'A worker process runs at most `concurrency` handlers at once, however many jobs it holds claimed ahead.',
    documented: [{ file: 'docs/configuration.md', quote: 'jobs running at once in one worker process' }],
    covers: { options: ['Worker.concurrency'] },
    vouch: {
      by: 'gate',
      judgedBy: [
        // 3 s jobs behind 2 slots with jobs claimed ahead waiting, and two restarts: 33 starts a run.
        { scenario: 'claim-ahead', invariant: 'handlers-within-concurrency' },
        // 50 ms jobs behind 2 slots, backed up for the whole run: 1,600 starts a run.
        { scenario: 'priority-starvation', invariant: 'handlers-within-concurrency' },
      ],
      minJudged: 500,
      mutants: ['extra-handler-slot'],
    },
  },
  {
    id: 'claim-ahead-handed-back-at-stop',
    promise: 'A stopping worker hands back the jobs it claimed ahead rather than starting them.',
    documented: [{ file: 'docs/configuration.md', quote: 'handed back at stop' }],
    covers: { options: ['Worker.claimAhead'] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'claim-ahead', invariant: 'no-start-after-stop' }], minJudged: 2, mutants: ['stop-starts-claimed-ahead'] },
  },
  {
    id: 'claim-ahead-keeps-lease',
    promise: 'A job claimed ahead keeps its lease while it waits for a slot in a live worker, however much longer than the lease it waits.',
    documented: [{ file: 'docs/configuration.md', quote: 'heartbeated while they wait' }],
    covers: { options: ['Worker.claimAhead', 'Worker.heartbeatMs'] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'claim-ahead', invariant: 'claim-ahead-lease' }], minJudged: 10, mutants: ['claim-ahead-unheartbeated'] },
  },
  {
    id: 'claim-ahead-grows-while-backed-up',
    promise:
      "Left unset, a worker's claim-ahead grows after a claim that came back full, to what its slots run in about 100 ms at the handlers' mean duration (at most 500), twofold a claim at most, shrinks when a job waited in it over half a heartbeat period, stays at concurrency for slow handlers, and a value that is set stays as set.",
    documented: [{ file: 'docs/configuration.md', quote: 'grows after a full claim' }],
    covers: { options: ['Worker.claimAhead'] },
    vouch: {
      by: 'gate',
      judgedBy: [
        // 50 ms jobs behind 2 slots, backed up for the whole run: the pace bound keeps the buffer at 2-4.
        { scenario: 'priority-starvation', invariant: 'claim-ahead-paced' },
        // A herd of 300 fast jobs at once: the buffer grows past its 16 (mustGrow), within its bounds.
        { scenario: 'retry-storm', invariant: 'claim-ahead-paced' },
      ],
      minJudged: 1_000,
      mutants: ['claim-ahead-unpaced', 'claim-one-per-lane'],
    },
  },
  {
    id: 'enqueue-idempotent',
    promise: 'An enqueue re-sent with the same idempotency key returns the same job: one job per key while its job is not archived.',
    documented: [{ file: 'docs/effects.md', quote: 'Every job has an idempotency key.' }],
    covers: { options: ['enqueue.idempotencyKey'], seed: [5] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'effects-pipeline', invariant: 'idempotent-enqueue' }], minJudged: 1, mutants: ['enqueue-ignores-key'] },
  },
  {
    id: 'prompt-wakeup',
    promise: 'An idle fleet starts a job as it is enqueued (NOTIFY), not at its next poll, and listens again after its connections are cut.',
    documented: [{ file: 'docs/engine.md', quote: 'Wake-up: LISTEN/NOTIFY plus a poll fallback' }],
    covers: { options: ['Worker.listen', 'Worker.pollMs'], seed: [6] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'quiet-hours', invariant: 'prompt-wakeup' }], minJudged: 5, mutants: ['listen-wrong-channel'] },
  },
  // ---- Refusals, settings and retention: once vouched only by tests, now each with a scenario that makes it happen
  {
    id: 'payload-size-refused',
    promise: 'A payload larger than maxPayloadBytes is refused at enqueue with the field named, and nothing is written.',
    documented: [{ file: 'docs/configuration.md', quote: 'largest serialized payload' }],
    covers: { options: ['enqueue.maxPayloadBytes'] },
    vouch: {
      by: 'gate',
      // retry-storm's load offers 8 padded payloads at the default limit: 3 at it, 3 one byte past it, 2 far past it
      // (mostly two-byte characters, so the ones past it are under the limit in UTF-16 units). A given maxPayloadBytes,
      // enqueueMany's whole-batch refusal and the other bad input stay test/enqueue.test.ts's.
      judgedBy: [{ scenario: 'retry-storm', invariant: 'payload-size-refused' }],
      minJudged: 6,
      mutants: ['payload-size-in-characters'],
    },
  },
  {
    id: 'prepared-statements-optional',
    promise: "With preparedStatements false a Db prepares nothing (a worker's claims and completions, an enqueue, all go unnamed), for poolers that drop prepared statements, and a worker on it still completes its jobs.",
    documented: [{ file: 'docs/configuration.md', quote: 'false for a pooler that drops them between transactions' }],
    covers: { options: ['Db.preparedStatements'] },
    // retry-storm runs worker 1 with --no-prepared-statements; its link proxy counts the statements it binds, named or not.
    vouch: { by: 'gate', judgedBy: [{ scenario: 'retry-storm', invariant: 'prepared-statements-honoured' }], minJudged: 100, mutants: ['prepared-statements-ignored'] },
  },
  {
    id: 'archive-partitions-retained',
    promise: 'The archiver keeps day partitions ahead and drops whole partitions past their retention.',
    documented: [
      { file: 'docs/scaling.md', quote: 'creates the days from the oldest done row to today + 2 before every pass' },
      { file: 'docs/scaling.md', quote: 'Retention drops whole partitions' },
    ],
    covers: { options: ['JobArchiver.retentionDays', 'JobArchiver.partitionsAheadDays'] },
    vouch: {
      by: 'gate',
      // The database clock steps 9 days under an archiver at its defaults (7 days kept, 2 ahead), whose archiveAfterMs
      // (10 days) moves none of the run's jobs: 2 days past retention, 10 within it, 3 ahead, 12 distinct, read by the
      // harness from the catalog at rest (11 when a UTC midnight falls inside the run: the day at the line is not judged).
      judgedBy: [{ scenario: 'archive-retention', invariant: 'archive-retention' }],
      minJudged: 6,
      mutants: ['retention-a-day-short', 'partitions-ahead-a-day-short'],
    },
  },
  // ---- Timeouts, cron policies, operator verbs, the command line and the dashboard (once gaps, now each in the gate)
  {
    id: 'handler-timeout',
    promise: 'A handler running longer than its queue’s timeoutMs fails the attempt with a timeout, and none fails before it.',
    documented: [{ file: 'docs/configuration.md', quote: 'a handler running longer fails the attempt' }],
    covers: { options: ['Worker.timeoutMs'] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'slow-worker', invariant: 'handler-timeout' }], minJudged: 10, mutants: ['timeout-not-enforced'] },
  },
  {
    id: 'dst-policy-honoured',
    promise: 'On a DST night each wall-clock schedule fires as its declared policy says (shift-first, shift-both, skip-first, skip-both), in its own time zone; interval schedules keep real elapsed time.',
    documented: [
      { file: 'docs/schedules.md', quote: 'Each schedule has a DST policy.' },
      { file: 'docs/schedules.md', quote: 'follow real elapsed time across both transitions' },
    ],
    covers: {
      options: ['Schedule.timezone', 'Schedule.dstPolicy=shift-first', 'Schedule.dstPolicy=shift-both', 'Schedule.dstPolicy=skip-first', 'Schedule.dstPolicy=skip-both'],
      seed: [4],
    },
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'dst-spring-forward', invariant: 'one-job-per-cron-occurrence' },
        { scenario: 'dst-fall-back', invariant: 'one-job-per-cron-occurrence' },
      ],
      minJudged: 20,
      mutants: ['dst-skip-as-shift', 'dst-fall-back-once'],
    },
  },
  {
    id: 'catch-up-policy-honoured',
    promise: 'After every scheduler was down, missed occurrences are written as the schedule’s catch-up policy says: none, the latest, or all within the window and none older.',
    documented: [{ file: 'docs/schedules.md', quote: 'the schedule\'s catch-up policy decides' }],
    covers: { options: ['Schedule.catchUp=none', 'Schedule.catchUp=latest', 'Schedule.catchUp=all', 'CronMaterializer.catchUpWindowMs'], seed: [4] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'dst-spring-forward', invariant: 'one-job-per-cron-occurrence' }], minJudged: 10, mutants: ['catch-up-ignores-window'] },
  },
  {
    id: 'cancel-is-final',
    promise: 'A cancelled job never completes or starts again: a running handler is aborted at its next heartbeat and its result refused; a done job cannot be cancelled.',
    documented: [{ file: 'docs/operating.md', quote: 'the handler reports afterwards is refused by the lease fence' }],
    covers: { verbs: ['control.cancel', 'dashboard.cancel'] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'operator-chaos', invariant: 'cancel-honoured' }], minJudged: 5, mutants: ['cancel-ignores-running'] },
  },
  {
    id: 'redrive-fresh-budget',
    promise: 'A redrive moves exactly the dead letters it selects and reruns each from a fresh attempt budget; a retried failed job keeps its budget.',
    documented: [{ file: 'docs/operating.md', quote: 'failed: due now, attempts kept; dead: redriven, fresh attempt budget' }],
    covers: { verbs: ['control.retry', 'control.redrive', 'dashboard.retry', 'dashboard.redrive', 'dashboard.redrive-bulk'] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'operator-chaos', invariant: 'redrive-reruns' }], minJudged: 4, mutants: ['redrive-keeps-attempts'] },
  },
  {
    id: 'dead-letter-codes',
    promise:
      'Every dead letter carries the code of the path that killed its job (attempts_exhausted, timeout, lease_expired, crash_loop, operator) beside its message, written by one SQL function; every redrive, single or bulk, goes through one statement that audits each job it moves.',
    documented: [
      { file: 'docs/engine.md', quote: 'which refuses a job that is not dead, words the message and writes the row' },
      { file: 'docs/engine.md', quote: 'writes one `stampede.control_audit` row per job in the same statement' },
    ],
    covers: {},
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'poison-herd', invariant: 'dead-letter-codes' },
        { scenario: 'operator-chaos', invariant: 'dead-letter-codes' },
        { scenario: 'slow-worker', invariant: 'dead-letter-codes' },
        { scenario: 'operator-chaos', invariant: 'operator-audited' },
      ],
      // poison-herd's 3 convictions, operator-chaos's exhausted budgets, convictions and dead-letters by hand, slow-worker's
      // 5 exhausted budgets: about 25 dead letters in a default gate run, and the bulk redrive's audited rows besides.
      minJudged: 10,
      mutants: ['rescue-codes-lease-expired', 'audit-skipped-on-bulk'],
    },
  },
  {
    id: 'operator-verbs',
    promise: 'Each operator verb, from the API, the CLI or the dashboard, does what it says in one audited transaction and refuses what makes no sense.',
    documented: [{ file: 'README.md', quote: 'Each is one transaction, refuses what makes no sense with a typed error, and is audited with who and why.' }],
    covers: {
      verbs: ['control.dead-letter', 'dashboard.dead-letter', 'dashboard.pause-queue', 'dashboard.resume-queue', 'dashboard.set-limits'],
    },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'operator-chaos', invariant: 'operator-audited' }], minJudged: 10, mutants: ['audit-skipped-on-bulk'] },
  },
  {
    id: 'cli-control-verbs',
    promise:
      'At the command line `stampede control cancel|retry|dead-letter|pause|resume|limit` does what its verb says and exits 0, printing the job or queue it acted on, or refuses with exit 2 and a message naming the target, and changes nothing.',
    documented: [{ file: 'docs/operating.md', quote: 'The CLI exits 0 when done, **2** for bad input or a refused action (the message says which)' }],
    covers: { verbs: ['cli.control.cancel', 'cli.control.retry', 'cli.control.dead-letter', 'cli.control.pause', 'cli.control.resume', 'cli.control.limit'] },
    // operator-chaos runs stampede control as its own process (via: 'cli'): the pause of ops and its resume, two
    // dead-letters, a retry of a dead job, a limit, a pending job's cancel and a done one's (refused, exit 2).
    vouch: { by: 'gate', judgedBy: [{ scenario: 'operator-chaos', invariant: 'cli-verbs' }], minJudged: 6, mutants: ['cli-dead-letter-cancels'] },
  },
  {
    id: 'cli-control-input',
    promise:
      '`stampede control` answers bad input (a job id that is not one, a zero limit or weight, an unknown command, a change without --by) with exit 2 and a message naming the input, changing nothing; its kill (dead-letter by another name) and redrive commands run their engine verbs, and `show` and `audit` show a change just made.',
    documented: [{ file: 'docs/operating.md', quote: 'The CLI exits 0 when done, **2** for bad input or a refused action (the message says which)' }],
    covers: { verbs: ['cli.control.kill', 'cli.control.redrive', 'cli.control.audit', 'cli.control.show'] },
    // operator-chaos: seven typos at the command line (cli-typos), a running job killed, limits set there and read back
    // with show and audit, and the command line's dead letters redriven there by their reason. What each prints for
    // every bad input (no DATABASE_URL among them), show's sequences and key weights, and --json stay test/control-cli.test.ts's.
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'operator-chaos', invariant: 'cli-refuses-bad-input' },
        { scenario: 'operator-chaos', invariant: 'cli-verbs' },
      ],
      minJudged: 12,
      mutants: ['cli-job-id-parse-int'],
    },
  },
  {
    id: 'cli-tenant-verbs',
    promise:
      "At the command line `limit --max-in-flight-per-key/--sequential` and `key-weight` set a queue's per-key cap, its sequences and a key's weight, audited as the API's verbs: the claims then keep to them as to the API's.",
    documented: [{ file: 'docs/operating.md', quote: 'At the command line a per-key setting is audited as the API\'s is' }],
    covers: { verbs: ['cli.control.limit', 'cli.control.key-weight'] },
    // weighted-tenants and noisy-tenant set their per-key caps, sequences and weights with stampede control (limitsVia: 'cli'):
    // the claims then judged are under those settings alone.
    vouch: {
      by: 'gate',
      judgedBy: [
        { scenario: 'weighted-tenants', invariant: 'weighted-share' },
        { scenario: 'noisy-tenant', invariant: 'per-key-limit' },
        { scenario: 'noisy-tenant', invariant: 'sequence-order' },
      ],
      minJudged: 5,
      mutants: ['cli-key-weight-dropped'],
    },
  },
  {
    id: 'dashboard-schedule-verbs',
    promise: "The dashboard pauses and resumes a schedule's materialization: nothing of a paused schedule is written until it is resumed, and it is written again after.",
    documented: [{ file: 'docs/dashboard.md', quote: 'pause and resume a queue or a schedule' }],
    covers: { verbs: ['dashboard.pause-schedule', 'dashboard.resume-schedule'] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'operator-chaos', invariant: 'schedule-paused-idle' }], minJudged: 1, mutants: ['materializer-ignores-pause'] },
  },
  {
    id: 'rescuer-optional',
    promise: 'A worker with rescue: false runs no lease rescuer of its own (another process must).',
    documented: [{ file: 'docs/api.md', quote: 'a Worker runs one unless `rescue: false`' }],
    covers: { options: ['Worker.rescue'] },
    // worker-crash runs worker 2 with --no-rescue through its kills and freeze: the other two take back what expires.
    vouch: { by: 'gate', judgedBy: [{ scenario: 'worker-crash', invariant: 'rescue-off-honoured' }], minJudged: 3, mutants: ['rescuer-always-on'] },
  },
  {
    id: 'dashboard-address',
    promise: 'The dashboard listens where it is told, 127.0.0.1:7676 by default, behind a random token.',
    documented: [{ file: 'README.md', quote: 'serves the same controls as a web page on 127.0.0.1:7676' }],
    covers: { options: ['DashboardServer.port', 'DashboardServer.host'] },
    // operator-chaos starts `stampede dashboard` at the command line (dashboard-cli: no --host, a free --port, no token)
    // and tries it: the printed address with the printed token, none and a wrong one, and the port on each
    // non-loopback address of the machine (2 on the development machine). The flags' refusals stay test/dashboard-cli.test.ts's.
    vouch: { by: 'gate', judgedBy: [{ scenario: 'operator-chaos', invariant: 'dashboard-bound-as-told' }], minJudged: 3, mutants: ['dashboard-default-host-any'] },
  },
  {
    id: 'dashboard-token-and-origins',
    promise: 'The dashboard answers only a request with its access token (given, from STAMPEDE_DASHBOARD_TOKEN, or a fresh random one), and takes a POST only from its own origin or a listed public origin.',
    documented: [{ file: 'docs/dashboard.md', quote: 'also accept POSTs whose `Origin` is URL: a TLS proxy in front that rewrites `Host`' }],
    covers: { options: ['DashboardServer.token', 'DashboardServer.publicOrigins'] },
    vouch: {
      by: 'gate',
      // operator-chaos sends each of its 9 job and queue verbs through the dashboard after the same verb forged five
      // ways (by GET, no session, no or another CSRF token, a foreign Origin): 45 forged requests in a default run.
      // That a listed public origin is taken and an https proxy keeping Host is stays test/dashboard-http.test.ts's.
      judgedBy: [{ scenario: 'operator-chaos', invariant: 'dashboard-refuses-forged' }],
      minJudged: 20,
      mutants: ['dashboard-ignores-origin', 'dashboard-ignores-csrf'],
    },
  },
  {
    id: 'dashboard-shared-round',
    promise: "The dashboard's queues page shows the elected sampler's round while it is fresh, estimates marked, and runs its own bounded round only when none is.",
    documented: [{ file: 'docs/configuration.md', quote: 'the queues page shows the elected sampler' }],
    covers: { options: ['DashboardServer.roundRowBudget', 'DashboardServer.sharedRoundMaxAgeMs'] },
    vouch: { by: 'gate', judgedBy: [{ scenario: 'operator-chaos', invariant: 'dashboard-shows-fresh-round' }], minJudged: 8, mutants: ['shared-round-age-in-microseconds'] },
  },
  {
    id: 'dashboard-slo-mark',
    promise: 'The dashboard marks a queue whose oldest unclaimed job is older than its SLO (60 s by default), and only such a queue.',
    documented: [{ file: 'README.md', quote: 'oldest unclaimed against the SLO' }],
    covers: { options: ['DashboardServer.sloMs'] },
    // operator-chaos replays a backlog dated 90 s back into the paused ops: over the SLO until the resume, orders under it;
    // the open tab's reads are judged against the harness's own reading of each queue's oldest due job.
    vouch: { by: 'gate', judgedBy: [{ scenario: 'operator-chaos', invariant: 'dashboard-slo-mark' }], minJudged: 10, mutants: ['slo-mark-in-seconds'] },
  },
  {
    id: 'dashboard-page-timeout',
    promise: 'A dashboard page whose query waits on a lock gives up after its statement timeout (5 s by default) and answers, instead of waiting for the lock.',
    documented: [{ file: 'docs/dashboard.md', quote: 'read-only transaction under `statement_timeout` (5 s by default)' }],
    covers: { options: ['DashboardServer.statementTimeoutMs'] },
    // db-host-faults locks the jobs table for 10 s while the tab reads the queues page every 2 s.
    vouch: { by: 'gate', judgedBy: [{ scenario: 'db-host-faults', invariant: 'dashboard-page-timeout' }], minJudged: 1, mutants: ['statement-timeout-in-seconds'] },
  },
  // ---- The harness's own promise ---------------------------------------------------------------
  {
    id: 'faults-shown-to-bite',
    promise: 'Every fault a scenario declares is injected and shown to have bitten; a run whose fault never bit is inconclusive, never green.',
    documented: [{ file: 'docs/scenario-format.md', quote: 'every declared fault injected, every injected fault with evidence (else inconclusive)' }],
    covers: {},
    vouch: {
      by: 'test',
      file: 'test/checkers-routing.test.ts',
      tests: ['faults-exercised: unknown when a fault was injected without evidence, or declared and never injected'],
      invariants: ['faults-exercised'],
      notInGate: 'The harness\'s own rule, applied in every gate run: faults-exercised can only come out unknown, never false, so no mutant can be shown caught by it; its checker\'s unit tests are its control.',
    },
  },
];
