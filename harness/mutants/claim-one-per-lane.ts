import { queryPatch, type Mutant } from './types.ts';

/**
 * The claim's per-lane probe keeps only the head of each (queue, priority)
 * lane (LIMIT 1 instead of twice the batch): every claim returns at most one
 * job per lane, the worker sleeps until its next poll, and a lane that was
 * keeping up falls behind. Nothing is lost or doubled; the oldest unclaimed
 * job just waits longer and longer, which only the SLO can see.
 */
export const claimOnePerLane: Mutant = {
  breaks: 'each claim takes at most one job per priority lane, so throughput collapses and the oldest unclaimed job waits past the SLO',
  caughtBy: 'oldest-age-slo',
  scenario: 'steady',
  changes: [queryPatch('engine/worker/worker.sql', 'ClaimJobs', [{ find: '              LIMIT (SELECT $2 * 2)\n', replace: '              LIMIT 1\n' }])],
};
