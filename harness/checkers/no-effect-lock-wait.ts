import type { EventOf, FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { Fleetline, jobLives, type Hold } from './lives.ts';
import { firstN, fmt, maxOf, type CheckerDef } from './types.ts';

export interface NoEffectLockWaitBounds {
  /**
   * How long, ms, the engine may take to hand a claim back once its handler
   * asked for an effect that another holder has open: one refused try of the
   * key's lock and one fenced write, 4 to 36 ms measured on a loaded 2-core
   * machine. Default 500. An engine that queues on the lock holds the claim
   * until the frozen holder resumes or the claim's own lease runs out: on
   * slow-worker-no-heartbeat (2 s leases, the retry asks about 0.8 s in)
   * at least about 1.1 s, 1.5 to 2.8 s measured.
   */
  answerMs: number;
}

/**
 * Faults that can end a frozen holder's open transaction from the server's
 * side (its backend terminated, the server restarted): after one, the key
 * may be free although the holder is still frozen.
 */
const TX_ENDING_FAULTS: ReadonlySet<string> = new Set(['db-restart', 'db-terminate-backends']);

/** A job's effect held open by a holder frozen inside its transaction, from its stop report to its resume. */
interface OpenEffect {
  jobId: number;
  workerId: string;
  node: string;
  fromT: number;
  toT: number;
}

/**
 * Each `worker-stop` at the `in-effect` point: the frozen worker reported
 * (from its own node) that it stopped inside the effect's transaction, the
 * key written and its lock held. The key is surely held until the worker is
 * resumed or dies, or a fault ends its transaction from the server's side;
 * after the resume it may still be held a while, which is not judged.
 */
function openEffects(history: readonly HistoryEvent[]): OpenEffect[] {
  const out: OpenEffect[] = [];
  for (const e of history) {
    for (const w of out) {
      if (w.toT !== Number.POSITIVE_INFINITY) continue;
      const resumed = e.type === 'fault:injected' && e.fault === 'worker-stop' && e.detail.phase === 'end' && e.detail.target === w.node;
      const died = e.type === 'process:exited' && e.node === w.node;
      const cut = e.type === 'fault:injected' && TX_ENDING_FAULTS.has(e.fault);
      if (resumed || died || cut) w.toT = e.t;
    }
    if (e.type === 'fault:evidence' && e.fault === 'worker-stop' && e.detail.point === 'in-effect' && e.node !== 'nemesis') {
      out.push({ jobId: Number(e.detail.jobId), workerId: String(e.detail.workerId), node: e.node, fromT: e.t, toT: Number.POSITIVE_INFINITY });
    }
  }
  return out;
}

/** What ended a hold, by its own report or the rescuer, first; undefined: nothing, as far as the history says. */
function endOf(h: Hold): { how: string; t: number; i: number } | undefined {
  const ends = [
    h.deferred && { how: 'handed back', ...h.deferred },
    h.completed && { how: 'completed', ...h.completed },
    h.failed && { how: 'failed', ...h.failed },
    h.lost && { how: 'lease lost', ...h.lost },
    h.released && { how: 'released', ...h.released },
    h.rescued && { how: h.rescued.e.crashed === false ? 'rescued (no crash charged)' : 'rescued, charged a crash', ...h.rescued },
  ].filter((x) => !!x);
  const first = ends.sort((a, b) => a.i - b.i)[0];
  return first && { how: first.how, t: first.e.t, i: first.i };
}

/**
 * A claim never waits on another holder's open effect. When a job's earlier
 * holder is frozen inside its effect's transaction (a worker stopped past its
 * lease, its key's lock held), a later holder whose handler asks for the
 * effect (`effect:started`) must be told at once that the key is busy and
 * hand its claim back uncharged (`job:deferred`) within `answerMs`. A holder
 * that queued on the lock instead keeps its claim for as long as the freeze
 * lasts, and any death of its worker meanwhile, unrelated to the job, would
 * be charged to the job as a crash (docs/crash-accounting.md).
 *
 * Judged only while the frozen holder surely holds the key: from its stop
 * report to its resume (or death, or a fault that ends its transaction from
 * the server). An asker whose own worker died or froze before the bound is
 * let off. Unknown when nothing asked for an effect in such a window.
 */
export function checkNoEffectLockWait(history: readonly HistoryEvent[], _final: FinalState, bounds: NoEffectLockWaitBounds): InvariantResult {
  const base = { name: 'no-effect-lock-wait', bound: `every effect asked for while another holder has it open is handed back within ${fmt(bounds.answerMs)} ms` };
  const windows = openEffects(history);
  const fleet = new Fleetline(history);
  const lives = jobLives(history);
  const bad: { why: string; [k: string]: unknown }[] = [];
  const answers: number[] = [];
  let judged = 0;
  let excused = 0;
  history.forEach((e, i) => {
    if (e.type !== 'effect:started') return;
    const open = windows.find((w) => w.jobId === e.jobId && w.workerId !== e.workerId && e.t > w.fromT && e.t < w.toT);
    if (!open) return;
    const hold = holdAsking(lives.get(e.jobId)?.holds ?? [], e, i);
    const end = hold && endOf(hold);
    const waitedMs = end ? end.t - e.t : Number.POSITIVE_INFINITY;
    if (end?.how === 'handed back' && waitedMs <= bounds.answerMs) {
      judged++;
      answers.push(waitedMs);
      return;
    }
    if (fleet.exitedBetween(e.node, e.t, e.t + bounds.answerMs) || fleet.frozenBetween(e.node, e.t, e.t + bounds.answerMs)) {
      excused++;
      return;
    }
    judged++;
    bad.push({
      why: `asked for its effect while ${open.workerId} (frozen in it) held the key, and kept its claim: ${end ? `${end.how} ${fmt(waitedMs)} ms later` : 'never handed back'}`,
      jobId: e.jobId,
      holder: e.workerId,
      attempt: e.attempt,
      askedAtMs: e.t,
      frozenHolderResumedAtMs: Number.isFinite(open.toT) ? open.toT : null,
    });
  });
  const figure =
    `${fmt(bad.length)} waits; ${fmt(judged)} effects asked for while another holder, frozen in it, held the key ` +
    `(${fmt(windows.length)} frozen in an effect): ${fmt(answers.length)} handed back` +
    (answers.length ? ` within ${fmt(maxOf(answers))} ms` : '') +
    (excused ? `; ${fmt(excused)} whose own worker died or froze first` : '');
  const asked = { n: judged, what: 'effects asked for while another holder, frozen in it, held the key' };
  if (bad.length) return { ...base, pass: false, figure, judged: asked, examples: firstN(bad) };
  if (judged === 0) return { ...base, pass: 'unknown', figure: `${figure}; nothing to judge`, judged: asked };
  return { ...base, pass: true, figure, judged: asked };
}

/** The hold whose handler asked: the latest claim of that job by that worker and attempt recorded before the ask. */
function holdAsking(holds: readonly Hold[], e: EventOf<'effect:started'>, i: number): Hold | undefined {
  return [...holds].reverse().find((h) => h.claim.workerId === e.workerId && h.claim.attempt === e.attempt && h.i < i);
}

export const noEffectLockWait: CheckerDef<NoEffectLockWaitBounds> = {
  name: 'no-effect-lock-wait',
  says: "a claim never waits on another holder's open effect: it is handed back uncharged at once, so the frozen holder's freeze is never its own",
  check: checkNoEffectLockWait,
  bounds: { answerMs: 'number' },
  defaults: { answerMs: 500 },
};
