import type { Mutant } from './types.ts';

/**
 * A Db that sends every named statement as given, whatever it was built with:
 * `--no-prepared-statements` is read and dropped, as a refactor that moved the
 * check would. Behind PgBouncer in transaction mode the worker's next
 * transaction lands on another server connection and fails with "prepared
 * statement does not exist"; straight to Postgres nothing shows, which is why
 * the harness reads the wire.
 */
export const preparedStatementsIgnored: Mutant = {
  breaks: 'a worker built with preparedStatements: false still runs its claim and completion as named prepared statements',
  caughtBy: 'prepared-statements-honoured',
  scenario: 'retry-storm',
  changes: [{ kind: 'table', table: 'db-statement-shapes', entry: 'onDb', use: (config) => config }],
};
