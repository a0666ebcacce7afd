import { defineScenario } from '../harness/scenario.ts';

/**
 * A long transaction (an analytics query, a forgotten BEGIN in psql, a
 * logical replication slot) pins the xmin horizon under steady load. Every
 * claimed and completed job leaves a dead tuple that vacuum may not remove
 * while the horizon is held: the classic way a SKIP LOCKED queue drowns, its
 * claim query scanning ever more dead index entries. The run samples dead
 * tuples, the horizon's age, claim latency and throughput every second; the
 * xmin-horizon-age signal must fire (threshold scaled down from the
 * production rule's 10 minutes to 5 s), and the oldest-unclaimed-age SLO must
 * hold throughout: claims stay on the partial index of pending rows.
 */
export default defineScenario({
  name: 'xmin-horizon',
  description:
    'A long-running transaction pins the xmin horizon for 12 s under steady load (a forgotten BEGIN, an analytics query): dead tuples pile up, the xmin-age signal fires, and claims stay fast (the oldest-unclaimed-age SLO holds).',
  seed: 83,
  durationS: 18,
  load: { model: 'poisson', rate: 300 },
  workers: 2,
  concurrency: 16,
  mix: [
    { kind: 'normal', share: 9, durationMs: { dist: 'lognormal', medianMs: 5, p99Ms: 50 } },
    { kind: 'effect', share: 1, durationMs: { dist: 'uniform', minMs: 2, maxMs: 10 } },
  ],
  engine: { pollMs: 100 },
  faults: [{ fault: 'xmin-hold', atS: 3, forS: 12 }],
  checkers: {
    'oldest-age-slo': true,
    'sampler-agrees': true,
    // The 12 s hold must show on the harness's own reading, and end with it.
    'declared-alerts': { mustFire: ['xmin-horizon-age'], mustClear: ['xmin-horizon-age'] },
  },
  thresholds: { oldestAgeSloMs: 2_000, xminAgeAlertMs: 5_000 },
  drainTimeoutS: 30,
});
