import type { Mutant } from './types.ts';

/**
 * A worker that gave up a lease it could not renew (its link cut) keeps the
 * claim instead of handing it back when the link heals: the job sits claimed
 * by nobody running it until the lease the database last wrote runs out and
 * the rescuer takes it back, charged an attempt it never ran. A claim whose
 * answer was held by the partition, processed by the database only at the
 * heal, keeps its job a whole lease more.
 */
export const expiredClaimKept: Mutant = {
  breaks: 'a worker that gave up an unrenewable lease keeps the claim after the link heals, so the job waits out a whole lease and a rescue, charged',
  caughtBy: 'recovers-after-heal',
  scenario: 'network-partition',
  changes: [{ kind: 'strategy', strategy: 'releaseExpired', use: async () => ({ rows: [], rowCount: 0, command: 'UPDATE', oid: 0, fields: [] }) }],
};
