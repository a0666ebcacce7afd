import type { Mutant } from './types.ts';

/**
 * A worker whose renewals cannot land keeps running its handlers however
 * long it has been cut off: the lease it last renewed runs out on the
 * database's clock, the rescuer gives the job to another worker, and both
 * run it at once until the partition heals and the first one's write is
 * refused. The engine aborts the handler once no renewal landed for a whole
 * lease (JobRun.expire); this mutant says a lease never may have ended.
 */
export const heartbeatFailureIgnored: Mutant = {
  breaks: 'a worker whose renewals fail (its link to Postgres cut) keeps running its handler past its lease, beside the new holder',
  caughtBy: 'handler-aborted-on-lease-loss',
  scenario: 'network-partition',
  changes: [{ kind: 'strategy', strategy: 'leaseMayEndAt', use: () => Number.POSITIVE_INFINITY }],
};
