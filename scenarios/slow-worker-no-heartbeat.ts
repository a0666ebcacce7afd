import { defineScenario } from '../harness/scenario.ts';
import { slowWorkerBase } from './slow-worker.ts';

/**
 * The same slow jobs with heartbeats off, plus one worker frozen (SIGSTOP)
 * for 15 s inside an effect's transaction: leases expire under running jobs and other workers take them over,
 * as SQS redelivers a message whose visibility timeout ran out. Duplicates
 * happen; they must be absorbed: the stale worker's completion is refused by
 * the lease-token fence, and its effect collapses onto the one dedup key
 * written in the effect's own transaction. The dedup-outside-tx and
 * no-fencing mutants are caught here.
 */
export default defineScenario({
  ...slowWorkerBase,
  name: 'slow-worker-no-heartbeat',
  description:
    'Jobs longer than the visibility timeout with no heartbeat, and a worker frozen by SIGSTOP for 15 s inside an effect\'s transaction (the SQS visibility-timeout redelivery): leases expire mid-job and jobs run twice; the fence refuses the stale completion and the in-transaction dedup key keeps exactly one effect, and the retry that meets the frozen key is handed back at once.',
  // Every slow job is rescued at least once (a rescue counts as a crash), a frozen one maybe twice: the
  // crash-loop limit sits above that.
  engine: { ...slowWorkerBase.engine, heartbeatMs: 0, maxCrashes: 6, maxAttempts: 10 },
  // All 30 slow and effect jobs are rescued, and each retry runs alone (a suspect): the fleet drains the
  // backlog slowly, and drains of 26 s were measured against the base's 30 s.
  drainTimeoutS: 60,
  // Two freezes armed on every worker, so the overlaps happen every run, not only when timing lines up.
  // One inside an effect's transaction (the effect written, not committed): the job is rescued and run
  // elsewhere while the frozen one still holds it open. It lasts 15 s: the frozen worker is convicted
  // dead about 5 s after its last liveness renewal, the retry (a suspect) waits for a worker with
  // nothing in flight (3 s measured under load) and asks for its effect about a second into its run, so
  // the retry meets the held key every run, with seconds to spare; an engine that queued on the key's
  // lock would hold the retry's claim until the resume (no-effect-lock-wait). One at the end of a slow
  // job, resumed the moment another worker has claimed it: its completion arrives while the new owner
  // holds the lease.
  faults: [
    { fault: 'worker-stop', atS: 3, target: 'worker:all', point: 'in-effect', forS: 15 },
    { fault: 'worker-stop', atS: 3, target: 'worker:all', point: 'before-report', forS: 8, resume: 'on-takeover' },
  ],
  // Every redelivery here is a stall (heartbeats off), a freeze or a hand-back of a retry that met the
  // frozen holder's key: each must be one, after its lease ended, and the hand-back must come at once.
  // The retries handed back at the frozen key are claimed again: attempt-accounting requires each such claim to
  // carry the attempt number of the claim deferred (a deferral is uncharged). No job here runs out of its budget.
  checkers: {
    'no-phantom-finish': true,
    'no-early-takeover': true,
    'crash-loop-isolation': true,
    'no-effect-lock-wait': true,
    'attempt-accounting': { minExhausted: 0 },
  },
});
