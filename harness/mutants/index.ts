import { applyMutant as applyChanges, applyDatabasePatches } from './apply.ts';
import { fairPickPerClaim } from './fair-pick-per-claim.ts';
import { asyncCommit } from './async-commit.ts';
import { commitLocal } from './commit-local.ts';
import { completionAckedUnwritten } from './completion-acked-unwritten.ts';
import { chargeOnFailure } from './charge-on-failure.ts';
import { cronKeySpelling } from './cron-key-spelling.ts';
import { catchUpIgnoresWindow } from './catch-up-ignores-window.ts';
import { dstFallBackOnce } from './dst-fall-back-once.ts';
import { dstSkipAsShift } from './dst-skip-as-shift.ts';
import { dbClockAsWallTime } from './db-clock-as-wall-time.ts';
import { crashOnAnyExpiry } from './crash-on-any-expiry.ts';
import { restartVouchesForPredecessor } from './restart-vouches-for-predecessor.ts';
import { dedupOutsideTx } from './dedup-outside-tx.ts';
import { depthIgnoresRetries } from './depth-ignores-retries.ts';
import { effectLockWait } from './effect-lock-wait.ts';
import { listenWrongChannel } from './listen-wrong-channel.ts';
import { noAging } from './no-aging.ts';
import { noCrashDetection } from './no-crash-detection.ts';
import { noFencing } from './no-fencing.ts';
import { noDeadLetterRow } from './no-dead-letter-row.ts';
import { rescueCodesLeaseExpired } from './rescue-codes-lease-expired.ts';
import { lostConnectionCharged } from './lost-connection-charged.ts';
import { claimDropsTraceContext } from './claim-drops-trace-context.ts';
import { otelFailuresAsSuccesses } from './otel-failures-as-successes.ts';
import { dashboardIgnoresOrigin } from './dashboard-ignores-origin.ts';
import { dashboardIgnoresCsrf } from './dashboard-ignores-csrf.ts';
import { dashboardDefaultHostAny } from './dashboard-default-host-any.ts';
import { payloadSizeInCharacters } from './payload-size-in-characters.ts';
import { cliDeadLetterCancels } from './cli-dead-letter-cancels.ts';
import { cliKeyWeightDropped } from './cli-key-weight-dropped.ts';
import { noJitter } from './no-jitter.ts';
import { noPauseFilter } from './no-pause-filter.ts';
import { noQueueLimit } from './no-queue-limit.ts';
import { oldestAgePriorityBlind } from './oldest-age-priority-blind.ts';
import { noSkipLocked } from './no-skip-locked.ts';
import { claimOnePerLane } from './claim-one-per-lane.ts';
import { laneProbeSkipsPriority0 } from './lane-probe-skips-priority-0.ts';
import { claimRecentOnly } from './claim-recent-only.ts';
import { claimPriorityInverted } from './claim-priority-inverted.ts';
import { equalJitter } from './equal-jitter.ts';
import { noStartRate } from './no-start-rate.ts';
import { stopStartsClaimedAhead } from './stop-starts-claimed-ahead.ts';
import { claimAheadUnheartbeated } from './claim-ahead-unheartbeated.ts';
import { claimAheadUnpaced } from './claim-ahead-unpaced.ts';
import { enqueueKeyTruncated } from './enqueue-key-truncated.ts';
import { claimIgnoresBackoff } from './claim-ignores-backoff.ts';
import { claimStealsExpiringLeases } from './claim-steals-expiring-leases.ts';
import { failOneOverBudget } from './fail-one-over-budget.ts';
import { failuresCountedAsCompletions } from './failures-counted-as-completions.ts';
import { rescuesUncounted } from './rescues-uncounted.ts';
import { renewalDoublesLease } from './renewal-doubles-lease.ts';
import { renewalUnfenced } from './renewal-unfenced.ts';
import { rescueFinishesLiveHolder } from './rescue-finishes-live-holder.ts';
import { suspectsInBatches } from './suspects-in-batches.ts';
import { archiveTooYoung } from './archive-too-young.ts';
import { effectAutocommit } from './effect-autocommit.ts';
import { enqueueIgnoresKey } from './enqueue-ignores-key.ts';
import { pruneIgnoresRetention } from './prune-ignores-retention.ts';
import { relayMarksAtClaim } from './relay-marks-at-claim.ts';
import { releaseChargesAttempt } from './release-charges-attempt.ts';
import { timeoutNotEnforced } from './timeout-not-enforced.ts';
import { archiveDeadJobs } from './archive-dead-jobs.ts';
import { auditSkippedOnBulk } from './audit-skipped-on-bulk.ts';
import { cancelIgnoresRunning } from './cancel-ignores-running.ts';
import { redriveKeepsAttempts } from './redrive-keeps-attempts.ts';
import { suspectClaimIgnoresPause } from './suspect-claim-ignores-pause.ts';
import { depthLabelsSwapped } from './depth-labels-swapped.ts';
import { sloRuleInMs } from './slo-rule-in-ms.ts';
import { panelOnRenamedMetric } from './panel-on-renamed-metric.ts';
import { claimIgnoresKeys } from './claim-ignores-keys.ts';
import { noPerKeyLimit } from './no-per-key-limit.ts';
import { sequenceIgnoresHead } from './sequence-ignores-head.ts';
import { heartbeatFailureIgnored } from './heartbeat-failure-ignored.ts';
import { leaseEndFromAnswer } from './lease-end-from-answer.ts';
import { dbErrorCharged } from './db-error-charged.ts';
import { resendIgnoresKey } from './resend-ignores-key.ts';
import { expiredClaimKept } from './expired-claim-kept.ts';
import { samplerLockPerTransaction } from './sampler-lock-per-transaction.ts';
import { sharedRoundAgeInMicroseconds } from './shared-round-age-in-microseconds.ts';
import { materializerIgnoresPause } from './materializer-ignores-pause.ts';
import { rescuerAlwaysOn } from './rescuer-always-on.ts';
import { sloMarkInSeconds } from './slo-mark-in-seconds.ts';
import { statementTimeoutInSeconds } from './statement-timeout-in-seconds.ts';
import { preparedStatementsIgnored } from './prepared-statements-ignored.ts';
import { cliJobIdParseInt } from './cli-job-id-parse-int.ts';
import { retentionADayShort } from './retention-a-day-short.ts';
import { partitionsAheadADayShort } from './partitions-ahead-a-day-short.ts';
import { enqueueIgnoresQueueBudget } from './enqueue-ignores-queue-budget.ts';
import { deferChargesAttempt } from './defer-charges-attempt.ts';
import { extraHandlerSlot } from './extra-handler-slot.ts';
import type { Mutant, MutantProcess } from './types.ts';

/**
 * Every mutant by name: deliberately broken engines, the negative controls of
 * the invariant checkers. Each breaks one guarantee and names the invariant
 * that must catch it and the scenario that exercises it. They live here, in
 * the harness; production code knows nothing of them (docs/mutants.md).
 */
export const MUTANTS = {
  'no-skip-locked': noSkipLocked,
  'dedup-outside-tx': dedupOutsideTx,
  'charge-on-failure': chargeOnFailure,
  'no-jitter': noJitter,
  'no-aging': noAging,
  'no-crash-detection': noCrashDetection,
  'no-fencing': noFencing,
  'cron-key-spelling': cronKeySpelling,
  'db-clock-as-wall-time': dbClockAsWallTime,
  'async-commit': asyncCommit,
  'oldest-age-priority-blind': oldestAgePriorityBlind,
  'depth-ignores-retries': depthIgnoresRetries,
  'failures-counted-as-completions': failuresCountedAsCompletions,
  'rescues-uncounted': rescuesUncounted,
  'no-dead-letter-row': noDeadLetterRow,
  'crash-on-any-expiry': crashOnAnyExpiry,
  'restart-vouches-for-predecessor': restartVouchesForPredecessor,
  'effect-lock-wait': effectLockWait,
  'no-queue-limit': noQueueLimit,
  'no-pause-filter': noPauseFilter,
  // The life-of-a-job checks (docs/job-life-checks.md), one each.
  'claim-ignores-backoff': claimIgnoresBackoff,
  'rescue-finishes-live-holder': rescueFinishesLiveHolder,
  'claim-steals-expiring-leases': claimStealsExpiringLeases,
  'fail-one-over-budget': failOneOverBudget,
  'suspects-in-batches': suspectsInBatches,
  'renewal-unfenced': renewalUnfenced,
  'renewal-doubles-lease': renewalDoublesLease,
  // The base invariants that had none.
  'enqueue-key-truncated': enqueueKeyTruncated,
  'claim-one-per-lane': claimOnePerLane,
  'lane-probe-skips-priority-0': laneProbeSkipsPriority0,
  'claim-recent-only': claimRecentOnly,
  // The shipped components under chaos (effects-pipeline), one per invariant.
  'relay-marks-at-claim': relayMarksAtClaim,
  'effect-autocommit': effectAutocommit,
  'archive-too-young': archiveTooYoung,
  'prune-ignores-retention': pruneIgnoresRetention,
  'release-charges-attempt': releaseChargesAttempt,
  'enqueue-ignores-key': enqueueIgnoresKey,
  // Wake-up by NOTIFY (quiet-hours).
  'listen-wrong-channel': listenWrongChannel,
  // The cron materializer's DST and catch-up policies (dst-spring-forward, dst-fall-back).
  'dst-skip-as-shift': dstSkipAsShift,
  'dst-fall-back-once': dstFallBackOnce,
  'catch-up-ignores-window': catchUpIgnoresWindow,
  // Worker.timeoutMs (slow-worker).
  'timeout-not-enforced': timeoutNotEnforced,
  // Promises that had no invariant (issue 38): priority order, full jitter's distribution, the start rate,
  // claim-ahead at stop and while waiting.
  'claim-priority-inverted': claimPriorityInverted,
  'equal-jitter': equalJitter,
  'no-start-rate': noStartRate,
  'stop-starts-claimed-ahead': stopStartsClaimedAhead,
  'claim-ahead-unheartbeated': claimAheadUnheartbeated,
  'claim-ahead-unpaced': claimAheadUnpaced,
  // The operator's verbs under chaos (operator-chaos), one per invariant.
  'cancel-ignores-running': cancelIgnoresRunning,
  'redrive-keeps-attempts': redriveKeepsAttempts,
  'audit-skipped-on-bulk': auditSkippedOnBulk,
  'suspect-claim-ignores-pause': suspectClaimIgnoresPause,
  'archive-dead-jobs': archiveDeadJobs,
  // The dashboard's schedule verbs and its shared round (operator-chaos serves the page beside elected samplers).
  'materializer-ignores-pause': materializerIgnoresPause,
  'shared-round-age-in-microseconds': sharedRoundAgeInMicroseconds,
  'slo-mark-in-seconds': sloMarkInSeconds,
  'statement-timeout-in-seconds': statementTimeoutInSeconds,
  // What operators deploy, evaluated by a real Prometheus (poison-herd): the exported gauges, the shipped rules, the dashboard.
  'depth-labels-swapped': depthLabelsSwapped,
  'slo-rule-in-ms': sloRuleInMs,
  'panel-on-renamed-metric': panelOnRenamedMetric,
  // Tenants within a queue (noisy-tenant), one per invariant.
  'claim-ignores-keys': claimIgnoresKeys,
  'no-per-key-limit': noPerKeyLimit,
  'sequence-ignores-head': sequenceIgnoresHead,
  'fair-pick-per-claim': fairPickPerClaim,
  // The link and the database host (docs/network-faults.md).
  'heartbeat-failure-ignored': heartbeatFailureIgnored,
  'lease-end-from-answer': leaseEndFromAnswer,
  'db-error-charged': dbErrorCharged,
  'resend-ignores-key': resendIgnoresKey,
  'expired-claim-kept': expiredClaimKept,
  'prepared-statements-ignored': preparedStatementsIgnored,
  // One queue-state sampler per database (worker-crash's workers elect one).
  'sampler-lock-per-transaction': samplerLockPerTransaction,
  // Failover to a streaming replica (docs/failover.md).
  'commit-local': commitLocal,
  'completion-acked-unwritten': completionAckedUnwritten,
  'lost-connection-charged': lostConnectionCharged,
  // Why a job died, as its dead letter's code says (poison-herd).
  'rescue-codes-lease-expired': rescueCodesLeaseExpired,
  // Trace context across the queue (slow-worker's traced workers).
  'claim-drops-trace-context': claimDropsTraceContext,
  // The RED metrics through OpenTelemetry (slow-worker's workers with a MeterProvider).
  'otel-failures-as-successes': otelFailuresAsSuccesses,
  // The dashboard's door (operator-chaos tries it with forged requests before each verb it issues there).
  'dashboard-ignores-origin': dashboardIgnoresOrigin,
  'dashboard-ignores-csrf': dashboardIgnoresCsrf,
  // Where the dashboard listens (operator-chaos starts `stampede dashboard` at the command line and probes it).
  'dashboard-default-host-any': dashboardDefaultHostAny,
  // maxPayloadBytes (retry-storm's padded offers).
  'payload-size-in-characters': payloadSizeInCharacters,
  // stampede control's verbs (operator-chaos calls some of them through the command line).
  'cli-dead-letter-cancels': cliDeadLetterCancels,
  'cli-job-id-parse-int': cliJobIdParseInt,
  // stampede control key-weight (weighted-tenants sets its weights at the command line).
  'cli-key-weight-dropped': cliKeyWeightDropped,
  // Worker.rescue: false (worker-crash runs one worker without its rescuer).
  'rescuer-always-on': rescuerAlwaysOn,
  // JobArchiver.retentionDays (archive-retention steps the database clock past it).
  'retention-a-day-short': retentionADayShort,
  // JobArchiver.partitionsAheadDays (the same scenario: after the step, the new days ahead must be there).
  'partitions-ahead-a-day-short': partitionsAheadADayShort,
  // setQueueMaxAttempts (retry-storm sets its queue's budget; its jobs give none of their own).
  'enqueue-ignores-queue-budget': enqueueIgnoresQueueBudget,
  // A deferral is uncharged (slow-worker-no-heartbeat's retries meet the frozen holder's effect).
  'defer-charges-attempt': deferChargesAttempt,
  // Worker.concurrency (claim-ahead's backlog keeps every slot busy, with jobs waiting for one).
  'extra-handler-slot': extraHandlerSlot,
} satisfies Record<string, Mutant>;

export type MutantName = keyof typeof MUTANTS;

export function isMutantName(name: string): name is MutantName {
  return Object.hasOwn(MUTANTS, name);
}

/** Applies mutant `name` to this process; returns the undo. */
export function applyMutant(name: MutantName): () => void {
  return applyChanges(name, MUTANTS[name]);
}

export { MUTANT_ARCHIVER_SCRIPT, MUTANT_CONTROL_SCRIPT, MUTANT_DASHBOARD_SCRIPT, MUTANT_RELAY_SCRIPT, MUTANT_SCHEDULER_SCRIPT, MUTANT_WORKER_SCRIPT } from './apply.ts';

/** Replaces, in the run's migrated database, the functions mutant `name` breaks (none for most mutants). */
export function applyMutantToDatabase(name: MutantName, db: Parameters<typeof applyDatabasePatches>[2]): Promise<void> {
  return applyDatabasePatches(name, MUTANTS[name], db);
}

/** Where a mutant's broken code runs (harness/mutants/types.ts `runsIn`); null for the real engine. */
export function mutantRunsIn(name: MutantName | null): MutantProcess | null {
  return name === null ? null : ((MUTANTS[name] as Mutant).runsIn ?? 'worker');
}
export type { Mutant } from './types.ts';
