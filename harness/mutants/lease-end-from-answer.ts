import type { Mutant } from './types.ts';

/**
 * A worker counts its lease from the answer of the statement that last wrote
 * it (the claim, a renewal) instead of from its send. The database set the
 * expiry when it ran the statement; an answer that took its time coming back
 * (a slow link, a loaded host) makes the worker think its lease lasts that
 * much longer than it does. Cut off right after such an answer, it keeps
 * running its handler past the lease the database holds, into the rescuer's
 * takeover.
 */
export const leaseEndFromAnswer: Mutant = {
  breaks: 'a worker counts its lease from the answer of its last renewal, not its send: after a slow answer and a cut, its handler runs past the lease',
  caughtBy: 'handler-aborted-on-lease-loss',
  scenario: 'network-partition',
  changes: [{ kind: 'strategy', strategy: 'leaseMayEndAt', use: (_sentAt, leaseMs, answeredAt) => answeredAt + leaseMs - Math.min(100, leaseMs / 10) }],
};
