import { queryPatch, type Mutant } from './types.ts';

/**
 * The sampling lock taken as a transaction-level advisory lock instead of a
 * session-level one, a one-word refactor: the statement's own transaction
 * ends at once and the lock with it, so every sampler that asks is granted it,
 * believes it leads, and runs a round every interval. N workers cost N rounds
 * per interval again, each overwriting the others' in the shared row.
 */
export const samplerLockPerTransaction: Mutant = {
  breaks: 'the elected sampler\'s lock is released as soon as it is taken, so every worker started with --sample-queue-state leads and runs its own rounds',
  caughtBy: 'one-round-per-interval',
  scenario: 'worker-crash',
  changes: [
    queryPatch('engine/metrics/sampler-election.sql', 'TryLeadSampling', [
      { find: 'pg_try_advisory_lock(', replace: 'pg_try_advisory_xact_lock(' },
    ]),
  ],
};
