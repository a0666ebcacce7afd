import { queryPatch, type Mutant } from './types.ts';

/**
 * The engine's sampler looks for the oldest due job of priorities 0-4 only
 * (as if there were five levels), so a backed-up lane at priority 9 reads
 * as having nothing waiting: the SLO gauge and its alert stay quiet.
 * Runs in the scenario runner, whose RunSampler uses the engine's sampler.
 */
export const oldestAgePriorityBlind: Mutant = {
  breaks: "the engine's oldest-unclaimed-age ignores priorities 5-9, so a backed-up high lane reads as empty",
  caughtBy: 'sampler-agrees',
  scenario: 'priority-starvation',
  runsIn: 'runner',
  changes: [queryPatch('engine/metrics/queue-state.sql', 'ClaimableByQueue', [{ find: 'FROM generate_series(0, 9) AS pr(n)', replace: 'FROM generate_series(0, 4) AS pr(n)' }])],
};
