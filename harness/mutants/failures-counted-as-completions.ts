import type { Mutant } from './types.ts';

/**
 * A failed attempt feeds the completion series: the completed counter and the
 * duration histogram under outcome "completed", as if a refactor had sent
 * every finished attempt down one path. stampede_jobs_failed_total stays at 0
 * through an outage, so an error-rate alert never fires, and the throughput a
 * dashboard shows counts the failures as work done. Every guarantee of the
 * queue itself holds; only what the worker tells an operator is wrong.
 */
export const failuresCountedAsCompletions: Mutant = {
  breaks: "a worker's /metrics counts failed attempts as completions, so its error rate reads 0 through an outage",
  caughtBy: 'red-metrics',
  scenario: 'retry-storm',
  changes: [
    {
      kind: 'red-recorder',
      event: 'job:failed',
      use: (m, e) => {
        m.completions.inc({ queue: e.queue });
        m.duration.observe({ queue: e.queue, outcome: 'completed' }, e.durationMs / 1000);
      },
    },
  ],
};
