import { queryPatch, type Mutant } from './types.ts';

/**
 * The claim's lane probe starts at priority 1 (`generate_series(1, 9)`, an
 * off-by-one of a refactor that took priorities as 1-based): priority 0, the
 * default, is never probed, so its jobs are never claimed. Nothing is lost
 * (the rows stay pending); the oldest unclaimed job only waits longer and
 * longer, which the SLO sees whatever the machine's speed.
 */
export const laneProbeSkipsPriority0: Mutant = {
  breaks: 'the claim never probes priority 0, the default: its jobs wait forever and the oldest unclaimed job passes the SLO',
  caughtBy: 'oldest-age-slo',
  scenario: 'steady',
  changes: [queryPatch('engine/worker/worker.sql', 'ClaimJobs', [{ find: 'FROM generate_series(0, 9) AS p(priority)', replace: 'FROM generate_series(1, 9) AS p(priority)' }])],
};
