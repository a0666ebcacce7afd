import { ValidationError } from '../../engine/errors.ts';
import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { archiveOnce } from './archive-once.ts';
import { archiveRetention } from './archive-retention.ts';
import { cancelHonoured } from './cancel-honoured.ts';
import { operatorAudited } from './operator-audited.ts';
import { redriveReruns } from './redrive-reruns.ts';
import { attemptAccounting } from './attempt-accounting.ts';
import { handBack } from './hand-back.ts';
import { releasedAtStop } from './released-at-stop.ts';
import { handlerTimeout } from './handler-timeout.ts';
import { idempotentEnqueue } from './idempotent-enqueue.ts';
import { outboxDelivery } from './outbox-delivery.ts';
import { pruneRetention } from './prune-retention.ts';
import { crashLoopIsolation } from './crash-loop-isolation.ts';
import { cronOccurrence } from './cron-occurrence.ts';
import { cronSkewRefusal } from './cron-skew-refusal.ts';
import { deadLetterRows } from './dead-letter-rows.ts';
import { deadLetterCodes } from './dead-letter-codes.ts';
import { traceContinued } from './trace-continued.ts';
import { otelCountsAgree } from './otel-counts-agree.ts';
import { dashboardRefusesForged } from './dashboard-refuses-forged.ts';
import { dashboardBoundAsTold } from './dashboard-bound-as-told.ts';
import { payloadSizeRefused } from './payload-size-refused.ts';
import { cliVerbs } from './cli-verbs.ts';
import { declaredAlerts } from './declared-alerts.ts';
import { durableAcknowledgements } from './durable-acknowledgements.ts';
import { deadLetterRouting } from './dead-letter-routing.ts';
import { downstreamInFlight } from './downstream-in-flight.ts';
import { exactlyOneEffect } from './exactly-one-effect.ts';
import { fairness } from './fairness.ts';
import { fleetRecovers } from './fleet-recovers.ts';
import { faultsExercised, queueDrained } from './inconclusive.ts';
import { jitterUniform } from './jitter-uniform.ts';
import { leaseFencing } from './lease-fencing.ts';
import { noConcurrentClaim } from './no-concurrent-claim.ts';
import { noEarlyStart } from './no-early-start.ts';
import { noEarlyTakeover } from './no-early-takeover.ts';
import { noEffectLockWait } from './no-effect-lock-wait.ts';
import { noJobLost } from './no-job-lost.ts';
import { noPhantomFinish } from './no-phantom-finish.ts';
import { noStaleCompletion } from './no-stale-completion.ts';
import { oldestAgeSlo } from './oldest-age-slo.ts';
import { pausedQueueIdle } from './paused-queue-idle.ts';
import { priorityOrder } from './priority-order.ts';
import { promptWakeup } from './prompt-wakeup.ts';
import { parametersHonoured } from './parameters-honoured.ts';
import { retrySpread } from './retry-spread.ts';
import { redMetrics } from './red-metrics.ts';
import { samplerAgrees } from './sampler-agrees.ts';
import { startRate } from './start-rate.ts';
import { noStartAfterStop } from './no-start-after-stop.ts';
import { claimAheadLease } from './claim-ahead-lease.ts';
import { claimAheadPaced } from './claim-ahead-paced.ts';
import { prometheusAlerts } from './prometheus-alerts.ts';
import { exportedMetricsAgree } from './exported-metrics-agree.ts';
import { dashboardQueriesLive } from './dashboard-queries-live.ts';
import { perKeyLimit } from './per-key-limit.ts';
import { tenantFairness } from './tenant-fairness.ts';
import { sequenceOrder } from './sequence-order.ts';
import { weightedShare } from './weighted-share.ts';
import { recoversAfterHeal } from './recovers-after-heal.ts';
import { handlerAbortedOnLeaseLoss } from './handler-aborted-on-lease-loss.ts';
import { unknownOutcomeResolved } from './unknown-outcome-resolved.ts';
import { noChargeForDbFaults } from './no-charge-for-db-faults.ts';
import { oneRoundPerInterval } from './one-round-per-interval.ts';
import { dashboardShowsFreshRound } from './dashboard-shows-fresh-round.ts';
import { dashboardSloMark } from './dashboard-slo-mark.ts';
import { dashboardPageTimeout } from './dashboard-page-timeout.ts';
import { preparedStatementsHonoured } from './prepared-statements-honoured.ts';
import { attemptBudgetAsSet } from './attempt-budget-as-set.ts';
import { cliRefusesBadInput } from './cli-refuses-bad-input.ts';
import { schedulePausedIdle } from './schedule-paused-idle.ts';
import { rescueOffHonoured } from './rescue-off-honoured.ts';
import { killedHolderCharged } from './killed-holder-charged.ts';
import { handlersWithinConcurrency } from './handlers-within-concurrency.ts';
import { failoverAsync, failoverSync } from './failover.ts';
import type { BoundKind, CheckerDef } from './types.ts';

/** Every invariant by name. The names are public: scenarios, mutants (harness/mutants/) and reports use them. */
export const CHECKERS = {
  'no-job-lost': noJobLost,
  'exactly-one-effect': exactlyOneEffect,
  'no-concurrent-claim': noConcurrentClaim,
  'dead-letter-routing': deadLetterRouting,
  fairness,
  'oldest-age-slo': oldestAgeSlo,
  'fleet-recovers': fleetRecovers,
  'one-job-per-cron-occurrence': cronOccurrence,
  'no-stale-completion': noStaleCompletion,
  'retry-spread': retrySpread,
  'downstream-in-flight': downstreamInFlight,
  'paused-queue-idle': pausedQueueIdle,
  'cron-skew-refusal': cronSkewRefusal,
  'durable-acknowledgements': durableAcknowledgements,
  'sampler-agrees': samplerAgrees,
  'red-metrics': redMetrics,
  'declared-alerts': declaredAlerts,
  'dead-letter-rows': deadLetterRows,
  // What operators deploy, judged from a real Prometheus's answers (docs/metrics.md).
  'prometheus-alerts': prometheusAlerts,
  'exported-metrics-agree': exportedMetricsAgree,
  'dashboard-queries-live': dashboardQueriesLive,
  // The whole life of every job (docs/job-life-checks.md).
  'no-early-start': noEarlyStart,
  'no-phantom-finish': noPhantomFinish,
  'no-early-takeover': noEarlyTakeover,
  'attempt-accounting': attemptAccounting,
  'crash-loop-isolation': crashLoopIsolation,
  'lease-fencing': leaseFencing,
  'no-effect-lock-wait': noEffectLockWait,
  'parameters-honoured': parametersHonoured,
  'prompt-wakeup': promptWakeup,
  'handler-timeout': handlerTimeout,
  // Every shipped component under chaos (docs/job-life-checks.md): the outbox relay, the archiver, the
  // pruner, graceful shutdown's hand-back, idempotent re-enqueue.
  'outbox-delivery': outboxDelivery,
  'archive-once': archiveOnce,
  'prune-retention': pruneRetention,
  'hand-back': handBack,
  // Graceful shutdown judged the same for every engine (docs/peers.md): nothing left held by a stopped worker.
  'released-at-stop': releasedAtStop,
  'idempotent-enqueue': idempotentEnqueue,
  // Promises that had no invariant (issue 38).
  'priority-order': priorityOrder,
  'jitter-uniform': jitterUniform,
  'start-rate': startRate,
  'no-start-after-stop': noStartAfterStop,
  'claim-ahead-lease': claimAheadLease,
  // claimAhead left unset grows while backed up, within its pace and its wait.
  'claim-ahead-paced': claimAheadPaced,
  // The operator's control verbs under chaos (operator-chaos).
  'cancel-honoured': cancelHonoured,
  'redrive-reruns': redriveReruns,
  'operator-audited': operatorAudited,
  // The link and the database host (docs/network-faults.md).
  'recovers-after-heal': recoversAfterHeal,
  'handler-aborted-on-lease-loss': handlerAbortedOnLeaseLoss,
  'unknown-outcome-resolved': unknownOutcomeResolved,
  'no-charge-for-db-faults': noChargeForDbFaults,
  // Failover to a streaming replica (docs/failover.md).
  'failover-sync': failoverSync,
  'failover-async': failoverAsync,
  'queue-drained': queueDrained,
  'faults-exercised': faultsExercised,
  // Tenants within a queue (noisy-tenant): the per-key cap and the fair share.
  'per-key-limit': perKeyLimit,
  'tenant-fairness': tenantFairness,
  'sequence-order': sequenceOrder,
  'weighted-share': weightedShare,
  // Workers that sample queue state elect one sampler (worker-crash).
  'one-round-per-interval': oneRoundPerInterval,
  // The dashboard's queues page beside that sampler (operator-chaos).
  'dashboard-shows-fresh-round': dashboardShowsFreshRound,
  // DashboardServer.sloMs and statementTimeoutMs: the SLO mark (operator-chaos's overdue backlog in a paused queue) and
  // a page held by a lock on the jobs table (db-host-faults).
  'dashboard-slo-mark': dashboardSloMark,
  'dashboard-page-timeout': dashboardPageTimeout,
  // A schedule paused from the dashboard while its scheduler runs (operator-chaos).
  'schedule-paused-idle': schedulePausedIdle,
  // Why each job died, as its dead letter's code says (poison-herd, operator-chaos, slow-worker).
  'dead-letter-codes': deadLetterCodes,
  // Trace context across the queue, in workers that load the OpenTelemetry SDK (slow-worker's `otel`).
  'trace-continued': traceContinued,
  'otel-counts-agree': otelCountsAgree,
  // The dashboard's door: forged requests beside operator-chaos's dashboard actions.
  'dashboard-refuses-forged': dashboardRefusesForged,
  // Where `stampede dashboard` listens: operator-chaos starts it at the command line and probes it.
  'dashboard-bound-as-told': dashboardBoundAsTold,
  // maxPayloadBytes: padded offers at and past it (retry-storm).
  'payload-size-refused': payloadSizeRefused,
  // stampede control, run as its own process (operator-chaos's faults with via: 'cli').
  'cli-verbs': cliVerbs,
  // An operator's typos at the command line (operator-chaos's cli-typos fault).
  'cli-refuses-bad-input': cliRefusesBadInput,
  // Worker.rescue: false (worker-crash runs one worker without its rescuer).
  'rescue-off-honoured': rescueOffHonoured,
  // A dead holder's leases are charged as crashes, its worker id reused by its restart or not (worker-crash: reuseWorkerIds).
  'killed-holder-charged': killedHolderCharged,
  // DbOptions.preparedStatements: false (retry-storm runs one worker so), judged on its link's wire.
  'prepared-statements-honoured': preparedStatementsHonoured,
  'attempt-budget-as-set': attemptBudgetAsSet,
  // JobArchiver.retentionDays and partitionsAheadDays, the database clock stepped past retention (archive-retention).
  'archive-retention': archiveRetention,
  // Worker.concurrency: handlers at once per worker process (claim-ahead keeps every slot busy).
  'handlers-within-concurrency': handlersWithinConcurrency,
} as const;

export type CheckerName = keyof typeof CHECKERS;
export type BoundsOf<N extends CheckerName> = (typeof CHECKERS)[N] extends CheckerDef<infer B> ? B : never;
/** Bounds by checker name; anything left out takes the checker's default. */
export type CheckerBounds = { [N in CheckerName]?: Partial<BoundsOf<N>> };

export function isCheckerName(name: string): name is CheckerName {
  return Object.hasOwn(CHECKERS, name);
}

const KIND_TEST: Record<BoundKind, (v: unknown) => boolean> = {
  number: (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0,
  string: (v) => typeof v === 'string',
  boolean: (v) => typeof v === 'boolean',
  'string[]': (v) => Array.isArray(v) && v.every((s) => typeof s === 'string'),
  window: (v) =>
    v === null ||
    (typeof v === 'object' && Number.isFinite((v as any).fromMs) && Number.isFinite((v as any).toMs) && (v as any).fromMs <= (v as any).toMs),
};
const KIND_WORDS: Record<BoundKind, string> = {
  number: 'a non-negative number',
  string: 'a string',
  boolean: 'true or false',
  'string[]': 'an array of strings',
  window: 'null or { fromMs, toMs } with fromMs <= toMs',
};

/**
 * Checks a scenario's bounds for one checker against what it accepts, and
 * returns them merged onto its defaults. `field` prefixes error messages
 * (e.g. `scenario.checkers.fairness`).
 */
export function resolveBounds<N extends CheckerName>(name: N, given: unknown, field = `checkers.${name}`): BoundsOf<N> {
  const def = CHECKERS[name] as unknown as CheckerDef<Record<string, unknown>>;
  if (given === undefined || given === true) return { ...def.defaults } as BoundsOf<N>;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw new ValidationError(field, `expected true or an object of bounds, got ${JSON.stringify(given)}`);
  }
  const known = Object.keys(def.bounds);
  for (const [key, value] of Object.entries(given)) {
    const kind = def.bounds[key];
    if (!kind) {
      throw new ValidationError(`${field}.${key}`, `is not a bound of ${name}; expected one of: ${known.join(', ') || '(none: it takes no bounds)'}`);
    }
    if (!KIND_TEST[kind](value)) throw new ValidationError(`${field}.${key}`, `expected ${KIND_WORDS[kind]}, got ${JSON.stringify(value)}`);
  }
  return { ...def.defaults, ...given } as BoundsOf<N>;
}

/**
 * Runs the named checkers over one history. A checker that throws yields
 * `unknown` with the error as its figure (as in Jepsen), so one broken checker
 * cannot hide the others' verdicts. A checker that passes having judged
 * nothing (`judged.n` 0) yields `unknown` too: a promise judged over zero
 * relevant events is not vouched for, whatever the checker concluded. The
 * rule is here, once, so a checker that forgets its own 'unknown' case cannot
 * pass vacuously. Unknown names are a usage error.
 */
export function runCheckers(
  names: readonly string[],
  history: readonly HistoryEvent[],
  final: FinalState,
  bounds: CheckerBounds = {},
): InvariantResult[] {
  for (const [i, name] of names.entries()) {
    if (!isCheckerName(name)) throw new ValidationError(`checkers[${i}]`, `unknown checker "${name}"; expected one of: ${Object.keys(CHECKERS).join(', ')}`);
  }
  return (names as CheckerName[]).map((name) => {
    const def = CHECKERS[name] as unknown as CheckerDef<unknown>;
    try {
      return nothingJudgedIsUnknown(def.check(history, final, resolveBounds(name, bounds[name])));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return { name, pass: 'unknown', figure: `checker threw: ${message}`, bound: 'n/a', judged: { n: 0, what: 'nothing (checker threw)' } };
    }
  });
}

/** A pass over nothing judged is no pass: unknown, its figure saying so. */
function nothingJudgedIsUnknown(r: InvariantResult): InvariantResult {
  if (r.pass !== true || r.judged.n > 0) return r;
  return { ...r, pass: 'unknown', figure: `${r.figure}; judged nothing (0 ${r.judged.what})` };
}

export type Verdict = 'pass' | 'fail' | 'inconclusive';

/**
 * One verdict for a run: any violated invariant fails it (exit 1), even when
 * the run was also inconclusive, because a violation seen is a violation;
 * otherwise any unknown makes it inconclusive (exit 3); else it passes (exit 0).
 * A check that could not run here for want of a tool (`notHere`) is listed
 * apart and, unless `strict` (CI, the gate), left out of the verdict: it
 * never passes, and a developer without the tool still gets a verdict on the rest.
 * A 'not-promised' result (a peer engine judged on a promise it does not make)
 * is left out of the verdict; a run with nothing else is inconclusive.
 */
export function verdictOf(
  results: readonly InvariantResult[],
  opts: { strict?: boolean } = {},
): { verdict: Verdict; exitCode: 0 | 1 | 3; failed: string[]; unknown: string[]; notHere: string[] } {
  const skipped = (r: InvariantResult) => r.pass === 'unknown' && r.notHere !== undefined && !opts.strict;
  const failed = results.filter((r) => r.pass === false).map((r) => r.name);
  const unknown = results.filter((r) => r.pass === 'unknown' && !skipped(r)).map((r) => r.name);
  const notHere = results.filter(skipped).map((r) => r.name);
  // A promise the engine does not make is outside its verdict, strict or not: judged, it could only mislead.
  const notPromised = results.filter((r) => r.pass === 'not-promised').length;
  if (failed.length) return { verdict: 'fail', exitCode: 1, failed, unknown, notHere };
  if (unknown.length || results.length === notHere.length + notPromised) return { verdict: 'inconclusive', exitCode: 3, failed, unknown, notHere };
  return { verdict: 'pass', exitCode: 0, failed, unknown, notHere };
}

/** Whether a run must judge every check it names (CI=true, or the gate's runs: STAMPEDE_STRICT=1). */
export function strictRun(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CI === 'true' || env.STAMPEDE_STRICT === '1';
}

export { inconclusiveReasons, faultTally } from './inconclusive.ts';
export { outageWindows } from './retry-spread.ts';
export { parseOccurrenceKey } from './cron-occurrence.ts';
