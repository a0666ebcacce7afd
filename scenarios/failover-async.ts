import { defineScenario } from '../harness/scenario.ts';
import { FAILOVER_RUN } from './failover-sync.ts';

/**
 * Failover to an asynchronous standby (docs/failover.md): as failover-sync,
 * but the primary acknowledges commits without waiting for the standby, so
 * the 2 s the replication link carried nothing are lost with the primary.
 * Every acknowledged write lost is listed by id and kind (an enqueue lost,
 * an id handed out again, a completion undone and rerun, an effect run
 * twice), each must have been acknowledged inside the lag the harness
 * measured at the promotion, and the count of lost enqueues must equal a
 * SQL count of the acknowledged ids missing on the promoted primary.
 *
 * no-job-lost, exactly-one-effect and no-concurrent-claim are off: under
 * asynchronous replication a failover loses acknowledged enqueues, reruns
 * effects whose commit it lost, and a claim it lost lets a second worker
 * take a job the first still runs until its renewal is refused. That is
 * the loss this scenario accounts for, write by write, in failover-async.
 * no-stale-completion and no-phantom-finish are off too: a claim the
 * failover lost is made again with the same attempt number, at times by the
 * same worker, so the history cannot tell the two holds apart (seed 3: the
 * first run's lease:lost was reported after the second claim, and the
 * second run's completion read as a completion after a lost lease).
 */
export default defineScenario({
  name: 'failover-async',
  description:
    'The primary dies after its asynchronous standby fell 2 s behind; the standby is promoted and the proxy re-pointed. Every acknowledged write lost is listed by id and kind, inside the measured lag, and the lost enqueues equal an independent SQL count.',
  seed: 46,
  ...FAILOVER_RUN,
  faults: [{ fault: 'failover', atS: 10, replication: 'async', lagS: 2 }],
  checkers: {
    'no-job-lost': false,
    'exactly-one-effect': false,
    'no-concurrent-claim': false,
    'no-stale-completion': false,
    'failover-async': true,
  },
});
