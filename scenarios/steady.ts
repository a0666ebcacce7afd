import { defineScenario } from '../harness/scenario.ts';
import { LIMIT_PANELS } from './background.ts';

/** The baseline every incident is measured against. */
export default defineScenario({
  name: 'steady',
  description:
    'Steady state at 500 jobs/s with realistic (heavy-tailed) handler durations: the oldest-unclaimed-age SLO holds, nothing is lost, nothing dies. If this fails, nothing else means anything.',
  seed: 1,
  durationS: 20,
  load: { model: 'poisson', rate: 500 },
  workers: 2,
  concurrency: 32,
  lanes: [{ queue: 'default', priority: 0, share: 1 }],
  mix: [
    { kind: 'normal', share: 9, durationMs: { dist: 'lognormal', medianMs: 5, p99Ms: 60 } },
    { kind: 'effect', share: 1, durationMs: { dist: 'uniform', minMs: 2, maxMs: 10 } },
  ],
  engine: { leaseMs: 10_000, heartbeatMs: 3_000, pollMs: 200 },
  thresholds: { oldestAgeSloMs: 2_000, deadLetterDepthAlert: 1 },
  checkers: {
    'oldest-age-slo': true,
    'sampler-agrees': true,
    'no-phantom-finish': true,
    'parameters-honoured': true,
    // The shipped rules in a real Prometheus page nobody in steady state; what it scraped is what the harness saw.
    'prometheus-alerts': true,
    'exported-metrics-agree': true,
    // Steady state has no failure, dead letter, lost or expired lease, limit or scheduler node: those panels are empty.
    'dashboard-queries-live': {
      mayBeEmpty: [
        ...LIMIT_PANELS,
        'panel "Dead-lettered per minute by reason"',
        'panel "Claims, completions, failures per second" target C',
        'panel "Failures per second by reason"',
        'panel "Leases lost and expired per second" target A',
        'panel "Leases lost and expired per second" target B',
        'panel "Clock skew by node"',
      ],
    },
  },
  drainTimeoutS: 30,
});
