import { queryPatch, type Mutant } from './types.ts';

/**
 * A deferral keeps the attempt its claim charged: a retry that meets another holder's open effect (a worker
 * frozen inside its effect's transaction) is handed back, as it should be, but pays an attempt for work it
 * never did, so each wait behind a frozen holder brings the job nearer its dead letter.
 */
export const deferChargesAttempt: Mutant = {
  breaks: "DeferJob hands back a claim whose effect another holder's open transaction holds without giving its attempt back",
  caughtBy: 'attempt-accounting',
  scenario: 'slow-worker-no-heartbeat',
  changes: [queryPatch('engine/worker/worker.sql', 'DeferJob', [{ find: 'attempts = greatest(j.attempts - 1, 0), ', replace: '' }])],
};
