import type { Mutant } from './types.ts';

/**
 * The worker takes the database's refusal of an effect's transaction (read
 * only, out of connection slots, the connection lost) for the job's own
 * failure: it writes a failed attempt, so a read-only primary or a full
 * server spends an attempt of every effect job that ran meanwhile, and a long
 * enough one dead-letters healthy jobs. Nor does it count the error as the
 * database's (no db:error, no metric).
 */
export const dbErrorCharged: Mutant = {
  breaks: "an effect the database refused (read-only, too many connections) is failed and charged an attempt instead of handed back, and the database's error goes uncounted",
  caughtBy: 'no-charge-for-db-faults',
  scenario: 'db-host-faults',
  changes: [{ kind: 'strategy', strategy: 'databaseFault', use: () => undefined }],
};
