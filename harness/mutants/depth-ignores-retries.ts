import { queryPatch, type Mutant } from './types.ts';

/**
 * The sampler's depth counts pending rows only, as if a job waiting out its
 * backoff were not backlog: during a retry storm the depth and due gauges
 * read a fraction of what waits, and the dashboard says the queue is nearly
 * empty while hundreds of retries are about to fall due. The pending figure
 * (claimable less failed) goes wrong with it. Runs in the scenario runner,
 * whose RunSampler uses the engine's sampler.
 */
export const depthIgnoresRetries: Mutant = {
  breaks: "the engine's queue depth and due count leave out failed jobs waiting to retry, so a retry storm's backlog reads as small",
  caughtBy: 'sampler-agrees',
  scenario: 'retry-storm',
  runsIn: 'runner',
  changes: [
    queryPatch('engine/metrics/queue-state.sql', 'ClaimableByQueue', [
      {
        find: "SELECT j.run_at FROM stampede.jobs j\n              WHERE j.state IN ('pending', 'failed') AND j.queue = l.queue",
        replace: "SELECT j.run_at FROM stampede.jobs j\n              WHERE j.state = 'pending' AND j.queue = l.queue",
      },
    ]),
  ],
};
