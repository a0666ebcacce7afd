import { queryPatch, type Mutant } from './types.ts';

/**
 * A transaction's statement_timeout given in seconds, a one-letter slip:
 * 5,000 ms becomes 5,000 s. A dashboard page (and a sampler's round) held by
 * a lock on the jobs table then waits as long as the lock does, holding its
 * connection, and a reload during a migration piles up more; nothing shows
 * until the table is locked.
 */
export const statementTimeoutInSeconds: Mutant = {
  breaks: "a dashboard page's statement_timeout is set in seconds, so a page held by a lock on the jobs table waits for the lock instead of giving up",
  caughtBy: 'dashboard-page-timeout',
  scenario: 'db-host-faults',
  // The dashboard is served by the scenario runner.
  runsIn: 'runner',
  changes: [queryPatch('engine/metrics/queue-state.sql', 'LocalStatementTimeout', [{ find: '$1::int::text', replace: "$1::int || 's'" }])],
};
