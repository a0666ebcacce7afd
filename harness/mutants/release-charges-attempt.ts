import { queryPatch, type Mutant } from './types.ts';

/**
 * Graceful shutdown's hand-back keeps the attempt it charged at claim: every
 * deploy spends an attempt of each job that was running, and a job caught in
 * enough rolling restarts is dead-lettered without ever failing.
 */
export const releaseChargesAttempt: Mutant = {
  breaks: 'ReleaseJobs hands claims back at shutdown without giving the attempt back, so each graceful restart spends an attempt',
  caughtBy: 'hand-back',
  scenario: 'effects-pipeline',
  changes: [queryPatch('engine/worker/worker.sql', 'ReleaseJobs', [{ find: 'attempts = greatest(j.attempts - 1, 0),', replace: 'attempts = j.attempts,' }])],
};
