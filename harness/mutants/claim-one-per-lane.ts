import { queryPatch, type Mutant } from './types.ts';

/**
 * The claim's per-lane probe keeps only the head of each (queue, priority)
 * lane (LIMIT 1 instead of twice the batch): every claim returns at most one
 * job per lane. Nothing is lost or doubled, and on a quiet machine a worker
 * that claims again as each handler ends still keeps up with 500 jobs/s one
 * job a claim (a gate run on a nearly idle machine saw steady's SLO hold), so
 * the SLO is no sure witness. What always shows is the claim's batch: while
 * retry-storm's herd of 300 is due, no claim comes back full, so the default
 * claim-ahead buffer, which grows only after a full claim, never grows
 * (claim-ahead-paced, with mustGrow).
 */
export const claimOnePerLane: Mutant = {
  breaks: 'each claim takes at most one job per priority lane: a backlog is claimed one job at a time, and the claim-ahead buffer never grows',
  caughtBy: 'claim-ahead-paced',
  scenario: 'retry-storm',
  changes: [queryPatch('engine/worker/worker.sql', 'ClaimJobs', [{ find: '              LIMIT (SELECT $2 * 2)\n', replace: '              LIMIT 1\n' }])],
};
