import { defineScenario } from '../harness/scenario.ts';
import { FAILOVER_RUN, failoverFaults } from './failover-sync.ts';

/**
 * Failover to an asynchronous standby (docs/failover.md): as failover-sync,
 * but the primary acknowledges commits without waiting for the standby, so
 * the 2 s the replication link carried nothing are lost with the primary.
 * Every acknowledged write lost is listed by id and kind (an enqueue lost,
 * an id handed out again, a completion undone and rerun, an effect run
 * twice, a cron occurrence fired twice: a minute of the database clock
 * begins inside the lag window, see failoverFaults), each must have been acknowledged inside the lag the harness
 * measured at the promotion, and the count of lost enqueues must equal a
 * SQL count of the acknowledged ids missing on the promoted primary.
 *
 * exactly-one-effect and no-concurrent-claim judge every job but those the
 * failover lost a write of: under asynchronous replication it reruns
 * effects whose commit it lost, hands lost ids out again, and a claim it
 * lost lets a second worker take a job the first still runs until its
 * renewal is refused. Those jobs are listed with their cause, and judged,
 * by failover-async. no-job-lost is off: the enqueues the failover lost are
 * that list's, counted against SQL. no-stale-completion and
 * no-phantom-finish stay on: a claim the failover lost is made again with
 * the same attempt number, at times by the same worker, and the two holds
 * are told apart by their lease tokens.
 */
export default defineScenario({
  name: 'failover-async',
  description:
    'The primary dies after its asynchronous standby fell 2 s behind; the standby is promoted and the proxy re-pointed. Every acknowledged write lost is listed by id and kind, inside the measured lag, and the lost enqueues equal an independent SQL count.',
  seed: 46,
  ...FAILOVER_RUN,
  faults: failoverFaults('async'),
  checkers: {
    'no-job-lost': false,
    'exactly-one-effect': { exceptFailoverLosses: true },
    'no-concurrent-claim': { exceptFailoverLosses: true },
    'no-stale-completion': true,
    'no-phantom-finish': true,
    // The three occurrences due in the lag window run on the old primary and again on the new one: listed.
    'failover-async': { minCronDue: 3 },
  },
});
