import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { TERMINAL_STATES } from './jobs.ts';
import { harnessAgeSamples } from './oldest-age-slo.ts';
import { fmt, maxOf, type CheckerDef, type WindowMs } from './types.ts';

export interface FleetRecoversBounds {
  /** The SLO on oldest-unclaimed-age, ms (the scenario's threshold). Default 5,000. */
  sloMs: number;
  /** The declared incident, ms since the run started; null (the default): nothing to recover from, inconclusive. */
  incident: WindowMs | null;
  /** Longest the fleet may take after the window's end to be back to normal, ms. Default 60,000. */
  maxRecoverMs: number;
}

/**
 * Worker processes that died of something the harness did not do: a
 * `process:exited` the fleet did not expect, whose pid no `worker-kill` fault
 * named. In a scenario without kill faults, these are the crash loop.
 */
export function unexplainedWorkerDeaths(history: readonly HistoryEvent[]): { t: number; pid: number; node: string }[] {
  const killed = new Set<number>();
  for (const e of history) if (e.type === 'fault:injected' && e.fault === 'worker-kill' && typeof e.detail.pid === 'number') killed.add(e.detail.pid);
  return history.flatMap((e) => (e.type === 'process:exited' && e.role === 'worker' && !e.expected && !killed.has(e.pid) ? [{ t: e.t, pid: e.pid, node: e.node }] : []));
}

/**
 * After an incident the fleet is back to normal, and stays so, within a bound:
 * oldest-unclaimed-age is under the SLO at every sample from then on, and no
 * worker process dies of a job any more. Both matter. A fleet whose age is
 * back under the SLO while a poison still kills a worker every few seconds has
 * not recovered: its capacity and the jobs in flight on each crashed process
 * are still being lost, and the age is low only while the load is light. The
 * recovery instant is the earliest sample at or after the window's end from
 * which both hold to the end of the run; none is "not recovered". So is a run
 * that ended with due jobs unfinished (a poison still in its crash loop when
 * the drain gave up): its last quiet samples show no recovery, only the end.
 */
export function checkFleetRecovers(history: readonly HistoryEvent[], final: FinalState, bounds: FleetRecoversBounds): InvariantResult {
  const base = { name: 'fleet-recovers', bound: `age under the SLO (${fmt(bounds.sloMs)} ms) and no worker crash, for good, <= ${fmt(bounds.maxRecoverMs)} ms after the incident` };
  const inc = bounds.incident;
  const what = 'samples after the incident';
  if (!inc) return { ...base, pass: 'unknown', figure: 'no incident declared: nothing to recover from', judged: { n: 0, what } };
  const samples = harnessAgeSamples(history, []).filter((s) => s.t >= inc.toMs);
  // Each sample after the window could have shown the age over the SLO (or a crash since the last one).
  const judged = { n: samples.length, what };
  if (samples.length === 0) return { ...base, pass: 'unknown', figure: `no sample after the incident window (${fmt(inc.fromMs)}-${fmt(inc.toMs)} ms): the run ended inside it`, judged };

  const deaths = unexplainedWorkerDeaths(history);
  const lastDeathT = deaths.length ? maxOf(deaths.map((d) => d.t)) : Number.NEGATIVE_INFINITY;
  const deathsAfter = deaths.filter((d) => d.t >= inc.toMs).length;
  // Walk back from the end: the recovery is the start of the final run of samples under the SLO, after the last death.
  const unfinished = final.jobs.filter((j) => !TERMINAL_STATES.has(j.state) && !j.notDueYet);
  let recoveredT: number | undefined;
  if (unfinished.length === 0) for (let i = samples.length - 1; i >= 0 && samples[i].age <= bounds.sloMs && samples[i].t > lastDeathT; i--) recoveredT = samples[i].t;
  const lastOver = [...samples].reverse().find((s) => s.age > bounds.sloMs);
  const endT = samples[samples.length - 1].t;
  const causes = [
    ...(unfinished.length ? [`${fmt(unfinished.length)} due ${unfinished.length === 1 ? "job" : "jobs"} unfinished when the run ended`] : []),
    lastOver ? `age last over the SLO at ${fmt(lastOver.t)} ms (${fmt(lastOver.age)} ms)` : 'age under the SLO at every sample after the window',
    deaths.length ? `last worker crash at ${fmt(lastDeathT)} ms (${fmt(deathsAfter)} of ${fmt(deaths.length)} after the window)` : 'no worker crash',
    `the run ended at ${fmt(endT)} ms`,
  ].join('; ');
  if (recoveredT === undefined) {
    return { ...base, pass: false, figure: `not recovered: ${causes}`, judged, examples: [{ incident: inc, lastOver, lastDeathT: deaths.length ? lastDeathT : null, unfinished: unfinished.slice(0, 5).map((j) => ({ jobId: j.id, state: j.state })) }] };
  }
  const recoverMs = Math.max(0, recoveredT - inc.toMs);
  return {
    ...base,
    pass: recoverMs <= bounds.maxRecoverMs,
    judged,
    figure: `recovered ${fmt(recoverMs)} ms after the incident (${fmt(inc.fromMs)}-${fmt(inc.toMs)} ms): ${causes}`,
  };
}

export const fleetRecovers: CheckerDef<FleetRecoversBounds> = {
  name: 'fleet-recovers',
  says: 'after the declared incident, within its bound, oldest-unclaimed-age is back under the SLO and no worker dies of a job any more, for the rest of the run',
  check: checkFleetRecovers,
  bounds: { sloMs: 'number', incident: 'window', maxRecoverMs: 'number' },
  defaults: { sloMs: 5_000, incident: null, maxRecoverMs: 60_000 },
};
