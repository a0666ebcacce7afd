import { toEpochMs, type ReportInput } from './input.ts';
import { analyze, type Analysis } from './analysis.ts';

/** Bumped when a field changes meaning or goes away; adding fields does not bump it. */
export const REPORT_JSON_SCHEMA = 'stampede.report/1';

/**
 * The machine-readable report: what `report.json` holds and what the runner
 * prints with `--json`. Every string in it is redacted. Times are ISO 8601
 * (wall) or ms since the run started (`t`, `…T`).
 */
export function buildReportJson(raw: ReportInput, analysis: Analysis = analyze(raw)) {
  const { input, impact, detection, breaches, rootCause, window } = analysis;
  const started = toEpochMs(input.startedAt, 'startedAt');
  const finished = toEpochMs(input.finishedAt, 'finishedAt');
  const first = detection.firstCrossings[0] ?? null;
  return {
    schema: REPORT_JSON_SCHEMA,
    scenario: { name: input.scenario.name, description: input.scenario.description },
    seed: input.seed,
    replayCommand: input.replayCommand,
    startedAt: new Date(started).toISOString(),
    finishedAt: new Date(finished).toISOString(),
    durationMs: finished - started,
    interrupted: input.interrupted,
    verdict: input.verdict,
    offeredRate: input.offeredRate,
    achievedRate: input.achievedRate,
    invariants: input.invariants.map((r) => ({ name: r.name, pass: r.pass, figure: r.figure, bound: r.bound, judged: r.judged, ...(r.notHere ? { notHere: r.notHere } : {}), ...(r.notPromised ? { notPromised: r.notPromised } : {}) })),
    thresholds: input.thresholds,
    impact: {
      jobsEnqueued: impact.jobsEnqueued,
      jobsCompleted: impact.jobsCompleted,
      dueToStartLatencyMs: { jobs: impact.latency.jobs, p50: impact.latency.p50Ms, p90: impact.latency.p90Ms, p99: impact.latency.p99Ms, max: impact.latency.maxMs, maxJobId: impact.latency.maxJobId },
      jobsDelayedBeyondSlo: impact.delayedJobs,
      maxOldestUnclaimedAgeMs: impact.maxOldestAge.ms,
      maxOldestUnclaimedAgeQueue: impact.maxOldestAge.queue,
      maxOldestUnclaimedAgeT: impact.maxOldestAge.t,
      peakDepth: impact.peakDepth,
      deadLettered: impact.deadLettered.count,
      deadLetteredJobIds: impact.deadLettered.jobIds,
      deadLetterRowsAtEnd: impact.deadLettered.finalRows,
      jobsStartedMoreThanOnce: impact.startedMoreThanOnce,
      duplicateDeliveriesAbsorbed: impact.duplicatesAbsorbed.count,
      duplicatedEffects: impact.duplicatedEffects.count,
    },
    detection: {
      trigger: detection.trigger ? { fault: detection.trigger.fault, t: detection.trigger.t } : null,
      firstSignal: first ? { signal: first.signal, t: first.t, afterTriggerMs: first.afterTriggerMs } : null,
      crossings: detection.firstCrossings,
    },
    sloBreaches: breaches,
    incidentWindow: window,
    rootCause: {
      findings: rootCause.findings,
      crashers: rootCause.crashers.map((c) => ({ jobId: c.jobId, queue: c.queue, crashes: c.crashes, pids: c.pids, deadT: c.deadT, attempts: c.attempts })),
      clockJumps: rootCause.clockJumps,
      herd: rootCause.herd,
    },
    mitigation: analysis.mitigation,
    actionItems: analysis.actions,
  };
}

export type ReportJson = ReturnType<typeof buildReportJson>;
