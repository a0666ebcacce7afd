import { queryPatch, type Mutant } from './types.ts';

/**
 * The worker LISTENs on a channel the enqueue trigger does not notify (a
 * rename made in one place only). Nothing is lost and nothing runs twice:
 * idle workers just wait for their poll, so every job starts up to pollMs late.
 */
export const listenWrongChannel: Mutant = {
  breaks: 'workers listen on a channel the enqueue trigger never notifies, so an idle fleet starts each job only at its next poll',
  caughtBy: 'prompt-wakeup',
  scenario: 'quiet-hours',
  changes: [queryPatch('engine/worker/worker.sql', 'ListenForEnqueues', [{ find: 'LISTEN stampede_jobs;', replace: 'LISTEN stampede_job;' }])],
};
