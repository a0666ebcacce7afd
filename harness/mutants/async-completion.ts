import { queryPatch, type Mutant } from './types.ts';

/**
 * Completions commit with synchronous_commit off (a "performance" setting
 * on the engine's connections): the COMMIT returns before its WAL is flushed,
 * so the worker reports the job completed, and a crash of Postgres in the
 * next moment rolls the completion back and the job runs again.
 */
export const asyncCompletion: Mutant = {
  breaks: 'completions are acknowledged before their WAL is on disk (synchronous_commit off), so a Postgres crash undoes acknowledged completions',
  caughtBy: 'durable-acknowledgements',
  scenario: 'db-restart',
  changes: [
    queryPatch('engine/worker/worker.sql', 'CompleteJobs', [
      {
        find: "WHERE j.id = r.id AND j.lease_token = r.token AND j.state = 'claimed'",
        replace: "WHERE j.id = r.id AND j.lease_token = r.token AND j.state = 'claimed' AND set_config('synchronous_commit', 'off', false) = 'off'",
      },
    ]),
  ],
};
