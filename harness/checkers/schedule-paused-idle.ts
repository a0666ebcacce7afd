import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { eventsOf } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface SchedulePausedIdleBounds {
  /**
   * After a pause answered, ms, within which a scheduler's tick that read the schedule as enabled just before
   * may still commit its occurrences (one tick's read-plan-insert, and the report's way back to the harness).
   */
  inFlightMs: number;
}

/**
 * A paused schedule is not materialized (docs/schedules.md: "Stops
 * materializing"), and a resumed one is again. Judged per pause window, from
 * the pause's answer (plus `inFlightMs`) to the resume's send, over the
 * scheduler nodes' `cron:materialized` reports: none of the paused schedule
 * may insert an occurrence inside; another schedule that did shows the window
 * was contested (an occurrence came due for writing while it was paused). After
 * the resume the paused schedule must insert again before the run ends. A
 * window no other schedule wrote in proves nothing; inconclusive without a
 * contested window.
 */
export function checkSchedulePausedIdle(history: readonly HistoryEvent[], _final: FinalState, bounds: SchedulePausedIdleBounds): InvariantResult {
  const writes = eventsOf(history, 'cron:materialized').filter((e) => e.inserted > 0);
  const resumes = eventsOf(history, 'schedule:resumed');
  const wrong: Record<string, unknown>[] = [];
  let contested = 0;
  let occurrences = 0;
  const pauses = eventsOf(history, 'schedule:paused');
  for (const p of pauses) {
    const resume = resumes.find((r) => r.scheduleId === p.scheduleId && r.sentAt >= p.t);
    const from = p.t + bounds.inFlightMs;
    const to = resume?.sentAt ?? Infinity;
    const inside = writes.filter((w) => w.t > from && w.t < to);
    const own = inside.filter((w) => w.scheduleId === p.scheduleId);
    for (const w of own) wrong.push({ schedule: p.scheduleId, t: Math.round(w.t), inserted: w.inserted, pausedAt: Math.round(p.t), by: w.nodeId });
    const others = inside.filter((w) => w.scheduleId !== p.scheduleId);
    if (others.length) contested++;
    occurrences += others.reduce((n, w) => n + w.inserted, 0);
    const after = resume && writes.some((w) => w.scheduleId === p.scheduleId && w.t >= resume.sentAt);
    if (resume && others.length && !after) wrong.push({ schedule: p.scheduleId, resumedAt: Math.round(resume.t), problem: 'nothing materialized after the resume' });
  }
  return {
    name: 'schedule-paused-idle',
    pass: wrong.length > 0 ? false : contested === 0 ? 'unknown' : true,
    figure: `${fmt(pauses.length)} schedule pauses, ${fmt(contested)} with ${fmt(occurrences)} occurrences of other schedules written meanwhile; ${fmt(wrong.length)} wrong (written while paused, or not again after the resume)`,
    bound: `no occurrence of a paused schedule written from ${fmt(bounds.inFlightMs)} ms after its pause answered until its resume; written again after it`,
    judged: { n: contested, what: 'schedule pauses while occurrences came due' },
    ...(wrong.length ? { examples: firstN(wrong) } : {}),
  };
}

export const schedulePausedIdle: CheckerDef<SchedulePausedIdleBounds> = {
  name: 'schedule-paused-idle',
  says: 'a paused schedule is not materialized until it is resumed, and is again after',
  check: checkSchedulePausedIdle,
  bounds: { inFlightMs: 'number' },
  defaults: { inFlightMs: 1_000 },
};
