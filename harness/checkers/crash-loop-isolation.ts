import { convictedAsCrashLoop, type FinalState, type HistoryEvent, type InvariantResult } from '../history.ts';
import { JobIndex } from './jobs.ts';
import { Fleetline, jobLives, type Hold, type JobLife } from './lives.ts';
import { firstN, fmt, maxOf, minOf, type CheckerDef } from './types.ts';

export interface CrashLoopIsolationBounds {
  /** Kinds that crash their worker by design. Default ['poison']. Every other job is innocent. */
  poisonKinds: string[];
}

/** The history index at which a hold ended by its own report (a hand-back too) or a rescue (Infinity: never, as far as the history says). */
function endIndex(h: Hold): number {
  return Math.min(...[h.completed, h.failed, h.lost, h.released, h.deferred, h.rescued].map((x) => x?.i ?? Number.POSITIVE_INFINITY));
}

/**
 * Crash rescues the history lost. A rescuer reports over its process's IPC
 * channel, and one SIGKILLed right after its pass takes the report with it;
 * the database still shows the rescue: the job's next claim (or its final
 * row) carries a crash count one higher than the hold before it, and that hold
 * ended with no report at all. Such a rescue is taken as recorded only when a
 * process that could have been its rescuer was killed (or crashed) before the
 * next claim: another node's, or the holder's own node a second time (its
 * restarted incarnation). It is then judged as a reported one is: its holder
 * must have been killed or frozen. Crashes counted before the job's first
 * recorded claim (that claim's report died with its holder too) count once
 * any process was killed before it; with no holder to judge, they are not
 * judged.
 */
function lostRescues(life: JobLife | undefined, finalCrashCount: number | undefined, endT: number, fleet: Fleetline): { hold?: Hold; byT: number }[] {
  const holds = life?.holds ?? [];
  const lost: { hold?: Hold; byT: number }[] = [];
  // Before the first hold the history has: claims whose reports died with their killed holder, and their rescues.
  const first = holds[0];
  const before = (first ? first.claim.crashCount : finalCrashCount) ?? 0;
  const reportedBefore = (life?.rescues ?? []).filter((r) => r.e.crashed !== false && (!first || r.i < first.i)).length;
  const firstT = first ? first.claim.t : endT;
  if (before - reportedBefore > 0 && fleet.diedBetween(0, firstT)) for (let n = reportedBefore; n < before; n++) lost.push({ byT: firstT });
  holds.forEach((h, k) => {
    if (endIndex(h) !== Number.POSITIVE_INFINITY) return;
    const next = holds[k + 1];
    const nextCount = next ? next.claim.crashCount : finalCrashCount;
    if (nextCount === undefined || nextCount - (h.claim.crashCount ?? 0) !== 1) return;
    const byT = next ? next.claim.t : endT;
    if (fleet.diedOtherThan(h.claim.node, h.claim.t, byT) || fleet.unexpectedExitCount(h.claim.node, h.claim.t, byT) >= 2) lost.push({ hold: h, byT });
  });
  return lost;
}

/**
 * A crash loop is caught without convicting anyone else:
 *
 * - a suspect (claimed with crash_count > 0) runs alone: its worker claims
 *   nothing else while it holds it, and no job its worker held when it took
 *   the suspect is rescued with it (charged with the suspect's crash);
 * - every crash charged is a real one: a job's final crash count equals the
 *   rescues recorded as crashes for it (`crashed`; every rescue, from an
 *   engine that did not say; and those whose report died with its rescuer,
 *   see lostRescues), and each such rescue's holder was killed or
 *   frozen meanwhile. A crash charged to a live holder (a stall with
 *   heartbeats off, a dropped connection while it reported, a lock wait
 *   behind a frozen worker) is an unrelated fault counted as a crash; only
 *   an engine that does not report `crashed` (it charges every expiry) is
 *   let off for a stall;
 * - conviction comes after exactly maxCrashes: a job dead as a crash loop
 *   has crash count and rescues equal to the workers' maxCrashes, and a job
 *   that reached it is dead; every poison job is convicted; no innocent is.
 *
 * Unknown when nothing crashed (no rescue, no suspect claimed) or when the
 * workers' settings were not recorded.
 */
export function checkCrashLoopIsolation(history: readonly HistoryEvent[], final: FinalState, bounds: CrashLoopIsolationBounds): InvariantResult {
  const fleet = new Fleetline(history);
  const idx = new JobIndex(history, final);
  const lives = jobLives(history);
  const settings = fleet.allSettings().map((s) => s.maxCrashes);
  const maxCrashes = minOf(settings);
  const poison = new Set(bounds.poisonKinds);
  const letters = new Map(final.deadLetters.map((d) => [d.jobId, d]));
  const bad: { why: string; [k: string]: unknown }[] = [];

  // Every hold by worker id, to see what else a suspect's worker held.
  const byWorker = new Map<string, Hold[]>();
  for (const life of lives.values()) for (const h of life.holds) (byWorker.get(h.claim.workerId) ?? byWorker.set(h.claim.workerId, []).get(h.claim.workerId)!).push(h);
  let suspects = 0;
  let rescues = 0;
  /** Every lease taken back, charged as a crash or not: what there was to judge. */
  let expiries = 0;
  for (const holds of byWorker.values()) {
    for (const s of holds) {
      if (!(s.claim.crashCount! > 0)) continue;
      suspects++;
      const sEnd = endIndex(s);
      for (const o of holds) {
        if (o === s) continue;
        if (o.i > s.i && o.i < sEnd) bad.push({ why: 'claimed beside a running suspect', suspect: s.claim.jobId, other: o.claim.jobId, workerId: s.claim.workerId });
        else if (o.i < s.i && endIndex(o) > s.i && o.rescued && o.rescued.i > s.i) {
          bad.push({ why: "charged with a suspect's crash", suspect: s.claim.jobId, innocent: o.claim.jobId, workerId: s.claim.workerId });
        }
      }
    }
  }
  // The same from the rescuer's side, which a killed worker cannot lose: every job taken back from one
  // owner beside a suspect it held (its crash count was above 1 after the rescue) shared the suspect's crash.
  const byOwner = new Map<string, { jobId: number; crashCount: number }[]>();
  for (const life of lives.values()) {
    for (const r of life.rescues) {
      if (r.e.owner == null || r.e.crashed === false) continue;
      (byOwner.get(r.e.owner) ?? byOwner.set(r.e.owner, []).get(r.e.owner)!).push({ jobId: life.jobId, crashCount: r.e.crashCount });
    }
  }
  for (const [owner, taken] of byOwner) {
    const suspect = taken.find((x) => x.crashCount > 1);
    if (!suspect) continue;
    for (const x of taken) {
      if (x === suspect || x.jobId === suspect.jobId) continue;
      const already = bad.some((b) => b.suspect === suspect.jobId && b.innocent === x.jobId);
      if (!already) bad.push({ why: "charged with a suspect's crash", suspect: suspect.jobId, innocent: x.jobId, workerId: owner });
    }
  }
  let convicted = 0;
  let unreported = 0;
  const endT = history.at(-1)?.t ?? 0;
  for (const job of final.jobs) {
    const life = lives.get(job.id);
    const charged = (life?.rescues ?? []).filter((r) => r.e.crashed !== false);
    const lost = lostRescues(life, job.crashCount, endT, fleet);
    for (const l of lost) {
      if (!l.hold) continue; // its claim was lost too: no holder to judge
      const cause = fleet.expiryCause(l.hold, l.byT);
      if (cause !== 'kill' && cause !== 'freeze') {
        bad.push({ why: `a crash charged while its holder was alive (${cause ?? 'running and heartbeating'}), its rescue unreported`, jobId: job.id, holder: l.hold.claim.workerId, attempt: l.hold.claim.attempt });
      }
    }
    unreported += lost.length;
    const recorded = charged.length + lost.length;
    rescues += recorded;
    expiries += (life?.rescues.length ?? 0) + lost.length;
    const isPoison = poison.has(idx.kindOf(job.id) ?? '');
    if (job.crashCount !== undefined && job.crashCount !== recorded) bad.push({ why: `crash count ${job.crashCount}, ${recorded} rescues recorded`, jobId: job.id });
    for (const h of life?.holds ?? []) {
      if (!h.rescued || h.rescued.e.crashed === false) continue;
      const cause = fleet.expiryCause(h, h.rescued.e.t);
      const real = cause === 'kill' || cause === 'freeze' || (cause === 'stall' && h.rescued.e.crashed === undefined);
      if (!real) {
        bad.push({ why: `a crash charged while its holder was alive (${cause ?? 'running and heartbeating'}): an unrelated fault`, jobId: job.id, holder: h.claim.workerId, attempt: h.claim.attempt });
      }
    }
    const letter = letters.get(job.id);
    const reason = letter?.reason ?? '';
    const asCrashLoop = job.state === 'dead' && letter !== undefined && convictedAsCrashLoop(letter);
    if (asCrashLoop) {
      convicted++;
      if (job.crashCount !== maxCrashes || recorded !== maxCrashes) bad.push({ why: `convicted after ${job.crashCount} crashes (${recorded} rescues), not maxCrashes ${maxCrashes}`, jobId: job.id });
      if (!isPoison) bad.push({ why: 'an innocent job convicted as a crash loop', jobId: job.id, crashCount: job.crashCount });
    } else if ((job.crashCount ?? 0) >= maxCrashes && job.state !== 'dead') {
      bad.push({ why: `${job.crashCount} crashes, not convicted`, jobId: job.id, state: job.state });
    }
    if (isPoison && !asCrashLoop) bad.push({ why: 'a poison job not convicted as a crash loop', jobId: job.id, state: job.state, reason });
  }
  const base = {
    name: 'crash-loop-isolation',
    bound: 'suspects alone; crashes charged only for real crashes; conviction at exactly maxCrashes, poison only',
    judged: { n: suspects + expiries, what: 'suspect claims and leases taken back' },
    figure:
      `${fmt(bad.length)} violations; ${fmt(suspects)} suspect claims, ${fmt(rescues)} crashes charged of ${fmt(expiries)} leases taken back` +
      (unreported ? ` (${fmt(unreported)} of them unreported: their rescuer was killed before it reported)` : '') +
      `, ${fmt(convicted)} convicted` +
      (settings.length ? ` (maxCrashes ${fmt(maxCrashes)}${maxOf(settings) !== maxCrashes ? `-${fmt(maxOf(settings))}` : ''})` : ''),
  };
  if (!settings.length) return { ...base, pass: 'unknown', figure: `${base.figure}; no worker:settings in the history (a run recorded before they were)` };
  if (bad.length) return { ...base, pass: false, examples: firstN(bad) };
  return { ...base, pass: suspects + expiries > 0 ? true : 'unknown' };
}

export const crashLoopIsolation: CheckerDef<CrashLoopIsolationBounds> = {
  name: 'crash-loop-isolation',
  says: 'a suspect runs alone; only real crashes are charged; a crash loop is convicted at exactly maxCrashes, and no innocent job is',
  check: checkCrashLoopIsolation,
  bounds: { poisonKinds: 'string[]' },
  defaults: { poisonKinds: ['poison'] },
};
