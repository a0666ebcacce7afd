import { DB_ERROR_KINDS } from '../../engine/errors.ts';
import type { Mutant } from './types.ts';

/**
 * The worker tells the database's trouble from the job's own by SQLSTATE
 * alone, as a refactor that trusted `err.code` would: a connection the driver
 * lost (the primary killed under a failover: "Connection terminated
 * unexpectedly", ECONNRESET) carries no SQLSTATE, so an effect whose
 * transaction the failover cut is failed and charged an attempt instead of
 * handed back. A read-only or a full server still has its SQLSTATE and is
 * handed back as before: only a failover shows it.
 */
export const lostConnectionCharged: Mutant = {
  breaks: "an effect whose connection the failover cut is failed and charged an attempt, the driver's lost connection taken for the job's own error",
  caughtBy: 'no-charge-for-db-faults',
  scenario: 'failover-sync',
  changes: [
    {
      kind: 'strategy',
      strategy: 'databaseFault',
      use: (err) => {
        const code = (err as { code?: unknown } | null)?.code;
        return typeof code === 'string' ? DB_ERROR_KINDS[code] : undefined;
      },
    },
  ],
};
