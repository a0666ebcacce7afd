import type { CheckerName } from '../checkers/index.ts';
import type { InvariantResult } from '../history.ts';
import type { EngineAdapter, PromiseName } from './types.ts';

/**
 * The promise each invariant judges. An invariant judges an engine only on
 * what that engine promises: run against a peer that does not make the
 * promise, it answers "not promised". The harness-level checks (did the queue
 * drain, did the faults bite) rest on no promise: every engine is judged on them.
 */
const RESTS_ON: Partial<Record<CheckerName, PromiseName[]>> = {
  'no-job-lost': ['durableEnqueue'],
  'durable-acknowledgements': ['durableEnqueue', 'stampedeObservability'],
  'unknown-outcome-resolved': ['durableEnqueue'],
  'exactly-one-effect': ['effectOnce'],
  'no-effect-lock-wait': ['effectOnce'],
  'no-concurrent-claim': ['exclusiveClaim'],
  // Due jobs not yet started: a job a dead worker still holds is not among them in any engine (graphile-worker's
  // stays locked, pg-boss's active), so the age judges how soon due work starts, which every engine is for.
  'oldest-age-slo': [],
  'fleet-recovers': ['crashRecovery'],
  'recovers-after-heal': ['crashRecovery'],
  'no-early-takeover': ['crashRecovery', 'heartbeats'],
  'lease-fencing': ['fencing'],
  'no-stale-completion': ['fencing'],
  'handler-aborted-on-lease-loss': ['fencing'],
  'dead-letter-routing': ['deadLetters', 'crashLoopVerdict'],
  'dead-letter-rows': ['deadLetters'],
  'crash-loop-isolation': ['crashLoopVerdict'],
  'priority-order': ['priorities'],
  'no-early-start': ['delayedJobs'],
  'one-job-per-cron-occurrence': ['cronOccurrenceKeys'],
  'released-at-stop': ['releaseOnStop'],
  'queue-drained': [],
  'faults-exercised': [],
};

/** The promises an invariant rests on; one not listed judges a stampede-specific promise (its metrics, its accounting, its components). */
export function promisesOf(name: CheckerName): PromiseName[] {
  return RESTS_ON[name] ?? ['stampedeObservability'];
}

/** The first promise of `name` the engine does not make, with where its docs say so; null when it makes them all. */
export function unpromised(engine: EngineAdapter, name: CheckerName): string | null {
  const missing = promisesOf(name).find((p) => !engine.promises[p]);
  if (!missing) return null;
  const where = engine.promises.source[missing];
  return `${engine.name} does not promise ${missing}${where ? ` (${where})` : ''}`;
}

/** The result of an invariant the engine does not promise: the fourth outcome, neither pass nor fail. */
export function notPromisedResult(name: CheckerName, why: string): InvariantResult {
  return { name, pass: 'not-promised', figure: `not promised: ${why}`, bound: 'n/a', judged: { n: 0, what: 'nothing (not promised)' }, notPromised: why };
}

/** Splits a run's invariants into those the engine promises (to run) and the others, already answered "not promised". */
export function splitByPromise(engine: EngineAdapter, names: readonly CheckerName[]): { judged: CheckerName[]; notPromised: InvariantResult[] } {
  const judged: CheckerName[] = [];
  const notPromised: InvariantResult[] = [];
  for (const name of names) {
    const why = unpromised(engine, name);
    if (why) notPromised.push(notPromisedResult(name, why));
    else judged.push(name);
  }
  return { judged, notPromised };
}
