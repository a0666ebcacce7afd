import type { ReportInput } from './input.ts';
import { elapsedOnDbClock } from '../../harness/history.ts';
import { dbAt, type HistoryIndex } from './job-index.ts';
import type { Impact } from './impact.ts';
import type { RootCause } from './root-cause.ts';
import type { Breach, Detection } from './timeline.ts';
import { fmtCount, fmtDuration, fmtList, fmtT, plural, percentile } from './format.ts';

/**
 * The mitigation and action-item sections: what the system did about the
 * incident, and what people should do next. Both are derived from the
 * history and the invariant results, never from a fixed template.
 */
export function mitigationText(input: ReportInput, idx: HistoryIndex, rc: RootCause, breaches: Breach[], window: { fromT: number; toT: number } | null): string[] {
  const out: string[] = [];
  for (const c of rc.crashers) {
    if (c.deadT !== null && outOfAttempts(c)) {
      out.push(
        `Crash-loop detection did not convict job ${c.jobId}: it was dead-lettered only when its attempts ran out, at ${fmtT(c.deadT)} after ${plural(c.attempts, 'attempt')} ("${c.dead!.reason}"), ` +
          `${fmtDuration(c.deadT - c.firstCrashT)} after its first crash; it crashed ${plural(c.crashes, 'process', 'processes')} in all, each a restart and the jobs in flight on it.`,
      );
    } else if (c.deadT !== null) {
      out.push(`Crash-loop detection routed job ${c.jobId} to the dead-letter queue at ${fmtT(c.deadT)}, ${fmtDuration(c.deadT - c.firstCrashT)} after its first crash; it crashed ${plural(c.crashes, 'process', 'processes')} in all.`);
    } else {
      out.push(`Job ${c.jobId} was never dead-lettered: it kept crashing workers (${plural(c.crashes, 'crash', 'crashes')}) until the history ended.`);
    }
  }
  if (window) {
    // Did every lane keep moving while the incident lasted? Completions per lane inside the window say so.
    const done = new Map<string, number>();
    const lat = new Map<string, number[]>();
    for (const e of input.history) {
      if (e.type === 'job:completed' && e.t >= window.fromT && e.t <= window.toT) done.set(e.queue, (done.get(e.queue) ?? 0) + 1);
    }
    for (const f of idx.jobs.values()) {
      const s = f.starts[0];
            if (!s || f.firstDueAt === null || s.t < window.fromT || s.t > window.toT) continue;
      const v = elapsedOnDbClock(f.firstDueAt!, s.dbTime ?? dbAt(idx, s.t), idx.dbSteps);
      const list = lat.get(f.queue) ?? [];
      list.push(v);
      lat.set(f.queue, list);
    }
    const lanes = [...new Set([...done.keys(), ...lat.keys()])].sort();
    if (lanes.length > 0) {
      const parts = lanes.map((q) => `\`${q}\` ${fmtCount(done.get(q) ?? 0)} (p99 due-to-start ${fmtDuration(percentile(lat.get(q) ?? [], 99))})`);
      out.push(`During the incident window (${fmtT(window.fromT)} to ${fmtT(window.toT)}) the lanes kept completing jobs: ${fmtList(parts, 12)}.`);
    }
  }
  // A relapse after the incident window while a poison still crash-looped: the loop, not the herd, held the lane.
  for (const b of breaches) {
    if (!window || b.fromT <= window.toT) continue;
    const looping = rc.crashers.filter((c) => c.firstCrashT <= b.fromT && (c.deadT ?? Infinity) >= b.fromT);
    if (looping.length === 0) continue;
    out.push(
      `Oldest-unclaimed-age went over the SLO again at ${fmtT(b.fromT)}, after the incident window, while ${fmtList(looping.map((c) => `job ${c.jobId}`))} still crash-looped ` +
        `(dead-lettered at ${fmtList(looping.map((c) => (c.deadT === null ? 'never' : fmtT(c.deadT))))}).`,
    );
  }
  const last = breaches[breaches.length - 1];
  if (last) {
    out.push(
      last.toT !== null
        ? `Oldest-unclaimed-age was back under the ${fmtDuration(input.thresholds.oldestAgeSloMs)} SLO in every lane at ${fmtT(last.toT)}, ${fmtDuration(last.toT - last.fromT)} after it last went over.`
        : `Oldest-unclaimed-age had not come back under the ${fmtDuration(input.thresholds.oldestAgeSloMs)} SLO when the history ended (${fmtT(idx.endT)}).`,
    );
  }
  const finalDlq = idx.samples[idx.samples.length - 1]?.deadLetterDepth;
  if (finalDlq !== undefined) out.push(`Dead-letter depth at the last sample: ${fmtCount(finalDlq)} (alert threshold ${input.thresholds.deadLetterDepth}).`);
  if (input.interrupted) out.push('The run was interrupted before it finished; these figures cover only what was recorded.');
  if (out.length === 0) out.push('No mitigation was needed: no crash loop, no SLO breach and no dead letters were recorded.');
  return out;
}

export function actionItems(input: ReportInput, impact: Impact, rc: RootCause, breaches: Breach[], detection: Detection): string[] {
  const out: string[] = [];
  for (const r of input.invariants) {
    if (r.pass === false) {
      const ex = r.examples?.length ? ` Examples: ${r.examples.slice(0, 2).map((e) => JSON.stringify(e)).join('; ')}.` : '';
      out.push(`Fix the \`${r.name}\` violation: measured ${r.figure} against a bound of ${r.bound}.${ex}`);
    } else if (r.pass === 'unknown') {
      out.push(`Make the \`${r.name}\` check decisive: it could not decide (${r.figure}).`);
    }
  }
  for (const c of rc.crashers.slice(0, 3)) {
    if (c.deadT !== null && outOfAttempts(c)) {
      out.push(
        `Crash-loop detection missed job ${c.jobId}: ${plural(c.crashes, 'crash', 'crashes')} of its worker did not convict it, and it ran until its attempt budget was spent (${fmtT(c.deadT)}); ` +
          'check the crash counting of the lease rescuer and maxCrashes. Its crash loop overlapped the herd all that time (see Root cause).',
      );
      continue;
    }
    out.push(
      c.deadT !== null
        ? `Find why job ${c.jobId}'s payload kills its worker (${plural(c.crashes, 'crash', 'crashes')} on ${fmtList(c.nodes)}) and make the handler fail instead of crash; each crash cost a process restart and the jobs in flight on it.`
        : `Crash-loop detection did not catch job ${c.jobId} after ${plural(c.crashes, 'crash', 'crashes')}: check the crash counting and the dead-letter routing.`,
    );
  }
  for (const j of rc.clockJumps) {
    if (j.occurrences > 0 && j.withDatabase) {
      out.push(`Bound catch-up after a clock step: ${j.node} materialized ${plural(j.occurrences, 'occurrence')} after the database clock stepped, most of them due at once; cap what one pass may catch up, or give schedules that need not run every missed occurrence the \`latest\` policy.`);
    } else if (j.occurrences > 0) out.push(`Bound catch-up after a clock jump: ${j.node} materialized ${plural(j.occurrences, 'occurrence')} after its clock moved; refuse or cap materialization when a node's clock disagrees with the database's.`);
  }
  if (breaches.length > 0 && detection.firstCrossings.length === 0) out.push('Add an alert: oldest-unclaimed-age went over the SLO but no alert signal fired.');
  const last = breaches[breaches.length - 1];
  if (last && last.toT === null) out.push(`Find out why lane \`${last.worstQueue}\` did not recover: oldest-unclaimed-age was still over the SLO when the history ended.`);
  if (impact.duplicatedEffects.count > 0) out.push(`Side effects ran more than once for ${plural(impact.duplicatedEffects.count, 'job')} (${fmtList(impact.duplicatedEffects.jobIds)}): the dedup did not hold.`);
  for (const f of rc.findings.filter((s) => s.includes('no evidence that it took effect'))) out.push(`Make the fault verifiable: ${f}`);
  if (input.interrupted) out.push(`Re-run to completion: \`${input.replayCommand}\`.`);
  if (out.length === 0) out.push('None: every invariant held and the run recovered on its own.');
  return out;
}

/** The job died of its attempt budget (the dead-letter reason says so), not of the crash-loop verdict. */
function outOfAttempts(c: RootCause['crashers'][number]): boolean {
  return c.dead !== null && /attempts exhausted/.test(c.dead.reason);
}
