import { queryPatch, type Mutant } from './types.ts';

/**
 * The worker's connections run with synchronous_commit off (a "performance"
 * setting, here switched on for the session by its first completion): a
 * COMMIT returns before its WAL is flushed, so the worker is told its claim
 * or completion is done, and a crash of Postgres in the next moment rolls it
 * back: the attempt is charged again, or the job runs again.
 */
export const asyncCommit: Mutant = {
  breaks: "the worker's connections commit with synchronous_commit off, so a Postgres crash undoes acknowledged claims and completions",
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
