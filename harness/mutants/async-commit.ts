import type { Mutant } from './types.ts';

/**
 * The worker's connections run with synchronous_commit off (a "performance"
 * setting in the deployment's PGOPTIONS): every COMMIT of the worker returns
 * before its WAL is flushed, so the worker is told its claim or completion is
 * done, and a crash of Postgres in the next moment rolls it back: the attempt
 * is charged again, or the job runs again. All its connections, not one: a
 * single synchronous commit on another connection would flush the others'
 * WAL with its own and hide the bug (a patch of CompleteJobs alone survived
 * db-restart once claims ran on other connections than completions).
 */
export const asyncCommit: Mutant = {
  breaks: "the worker's connections commit with synchronous_commit off, so a Postgres crash undoes acknowledged claims and completions",
  caughtBy: 'durable-acknowledgements',
  scenario: 'db-restart',
  changes: [{ kind: 'env', name: 'PGOPTIONS', value: '-c synchronous_commit=off' }],
};
