import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { TERMINAL_STATES } from './jobs.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface FaultsExercisedBounds {
  /** Faults the scenario declared; one never injected at all is inconclusive too. Default [] : judge only what was injected. */
  declared: string[];
}

/** Per fault name: how often it was injected and how often it recorded that it bit. */
export function faultTally(history: readonly HistoryEvent[]): Map<string, { injected: number; evidence: number }> {
  const tally = new Map<string, { injected: number; evidence: number }>();
  const get = (f: string) => tally.get(f) ?? tally.set(f, { injected: 0, evidence: 0 }).get(f)!;
  for (const e of history) {
    // An outage's closing marker is not a second injection.
    if (e.type === 'fault:injected' && e.detail.phase !== 'end') get(e.fault).injected++;
    if (e.type === 'fault:evidence') get(e.fault).evidence++;
  }
  return tally;
}

/**
 * A fault that never bit proves nothing: the kill landed when no job was in
 * flight, the poison was never claimed. Each fault name injected must have at
 * least one `fault:evidence`, and each declared one must have been injected.
 * Never `false`, only `unknown`: an unexercised fault makes the run
 * inconclusive (exit 3), not a violation.
 */
export function checkFaultsExercised(history: readonly HistoryEvent[], _final: FinalState, bounds: FaultsExercisedBounds): InvariantResult {
  const tally = faultTally(history);
  const reasons: string[] = [];
  for (const f of bounds.declared) if (!tally.get(f)?.injected) reasons.push(`${f}: declared, never injected`);
  for (const [f, n] of tally) {
    if (n.injected > 0 && n.evidence === 0) reasons.push(`${f}: injected ${fmt(n.injected)}x, no evidence it bit`);
  }
  const parts = [...tally].map(([f, n]) => `${f} ${fmt(n.evidence)}/${fmt(n.injected)}`);
  const injections = [...tally.values()].reduce((sum, n) => sum + n.injected, 0);
  return {
    name: 'faults-exercised',
    pass: reasons.length ? 'unknown' : true,
    figure: parts.length ? `evidence/injected: ${parts.join(', ')}` : 'no faults injected',
    bound: 'every injected fault shows evidence; every declared fault injected',
    judged: { n: injections, what: 'fault injections' },
    ...(reasons.length ? { examples: reasons } : {}),
  };
}

/**
 * The queue drained: every job in the final state is done or dead. If not,
 * the run ended before the system could show what it would do with the rest,
 * so it is inconclusive (raise the drain timeout), never green.
 */
export function checkQueueDrained(_history: readonly HistoryEvent[], final: FinalState): InvariantResult {
  const byState = new Map<string, number>();
  // A row scheduled for after the end (a cron node's lookahead) is not unfinished: nothing asked it to run yet.
  const later = final.jobs.filter((j) => j.notDueYet).length;
  const left = final.jobs.filter((j) => !TERMINAL_STATES.has(j.state) && !j.notDueYet);
  for (const j of left) byState.set(j.state, (byState.get(j.state) ?? 0) + 1);
  const detail = [...byState].map(([s, n]) => `${fmt(n)} ${s}`).join(', ');
  const scheduled = later ? `; ${fmt(later)} scheduled for later` : '';
  return {
    name: 'queue-drained',
    pass: left.length ? 'unknown' : true,
    figure: left.length
      ? `${fmt(left.length)} of ${fmt(final.jobs.length)} jobs unfinished (${detail})${scheduled}`
      : `all ${fmt(final.jobs.length - later)} due jobs done or dead${scheduled}`,
    bound: '0 unfinished',
    judged: { n: final.jobs.length - later, what: 'due jobs' },
    ...(left.length ? { examples: firstN(left).map((j) => ({ jobId: j.id, queue: j.queue, state: j.state, attempts: j.attempts })) } : {}),
  };
}

/** Why a run is inconclusive, in words; empty when it is conclusive. */
export function inconclusiveReasons(history: readonly HistoryEvent[], final: FinalState, declaredFaults: string[] = []): string[] {
  const out: string[] = [];
  const faults = checkFaultsExercised(history, final, { declared: declaredFaults });
  if (faults.pass !== true) out.push(...(faults.examples as string[]));
  const drained = checkQueueDrained(history, final);
  if (drained.pass !== true) out.push(`queue not drained: ${drained.figure}`);
  return out;
}

export const faultsExercised: CheckerDef<FaultsExercisedBounds> = {
  name: 'faults-exercised',
  says: 'every fault the scenario declared was injected and bit (else the run is inconclusive)',
  check: checkFaultsExercised,
  bounds: { declared: 'string[]' },
  defaults: { declared: [] },
};

export const queueDrained: CheckerDef<Record<string, never>> = {
  name: 'queue-drained',
  says: 'every job ended done or dead by the end of the drain (else the run is inconclusive)',
  check: checkQueueDrained,
  bounds: {},
  defaults: {},
};
