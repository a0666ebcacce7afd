import { queryPatch, type Mutant } from './types.ts';

/**
 * The claim forgets that a queue is sequential: the cap of one per key still
 * holds, but a key's next job is offered whenever nothing of the key is in
 * flight, not only once the job before it is finished. A head waiting out its
 * backoff, or a crashed head waiting as a suspect, is overtaken.
 */
export const sequenceIgnoresHead: Mutant = {
  breaks: "a sequential queue starts a key's next job while the one before it waits to retry or to rerun after a crash, out of enqueue order",
  caughtBy: 'sequence-order',
  scenario: 'noisy-tenant',
  changes: [
    queryPatch('engine/worker/worker.sql', 'ClaimJobs', [{ find: 'g.key_cursor, g.sequential) AS f(id)', replace: 'g.key_cursor, false) AS f(id)' }]),
    queryPatch('engine/worker/worker.sql', 'ClaimSuspect', [{ find: 'AND (NOT g.sequential OR j.fairness_key IS NULL', replace: 'AND (true OR j.fairness_key IS NULL' }]),
  ],
};
