import { queryPatch, type Mutant } from './types.ts';

/**
 * The engine's sampler takes each queue's oldest due job from priorities 0-4
 * only (as if there were five levels), so a backed-up lane at priority 9
 * reads as having nothing waiting: the SLO gauge and its alert stay quiet,
 * while the depth is still counted. Runs in the scenario runner, whose
 * RunSampler uses the engine's sampler.
 */
export const oldestAgePriorityBlind: Mutant = {
  breaks: "the engine's oldest-unclaimed-age ignores priorities 5-9, so a backed-up high lane reads as empty",
  caughtBy: 'sampler-agrees',
  scenario: 'priority-starvation',
  runsIn: 'runner',
  changes: [
    queryPatch('engine/metrics/queue-state.sql', 'ClaimableByQueue', [
      {
        find: 'SELECT q.queue, q.oldest FROM queues q',
        replace:
          "SELECT q.queue, (SELECT min(j.run_at) FROM stampede.jobs j WHERE j.state IN ('pending', 'failed') AND j.queue = q.queue AND j.priority <= 4) AS oldest FROM queues q",
      },
    ]),
  ],
};
