import type { Mutant } from './types.ts';

/**
 * The rescuer's expired-lease takebacks feed no series: a refactor dropped
 * the lease:rescued recorder. stampede_leases_expired_total stays at 0 while
 * workers die and their leases run out, so an alert on crashed workers (expired
 * leases per minute) never fires. The rescues themselves happen: only what the
 * worker tells an operator is wrong.
 */
export const rescuesUncounted: Mutant = {
  breaks: "a worker's /metrics never counts the expired leases its rescuer takes back, so a crash-loop alert on them never fires",
  caughtBy: 'red-metrics',
  scenario: 'worker-crash',
  changes: [{ kind: 'red-recorder', event: 'lease:rescued', use: () => {} }],
};
