import type { EventOf, FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { Fleetline, jobLives } from './lives.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface HandlerTimeoutBounds {
  /**
   * The handler time limit the scenario gave every worker (engine.timeoutMs), ms; 0: none. Each worker
   * must report this limit for its queues (`worker:settings`): a worker that resolved another one (or
   * none) is a violation, not a reason to judge it by its own word. Default 0: judge by what each
   * worker reported.
   */
  timeoutMs: number;
  /**
   * How far past the limit a handler may settle and still complete, ms: the worker's timer and the
   * handler's own settling race on one event loop, whose turns run late on a loaded machine. Default 250.
   */
  lagMs: number;
  /** How long after the limit the worker may take to record the timeout's failure (its write included), ms. Default 1,000. */
  slackMs: number;
}

/**
 * How much shorter than the limit a timeout's measured run may read: the timer and the clock the worker
 * measures with are whole milliseconds apart (a 2,600 ms timer measured 2,599 ms in a slow-worker run).
 */
const TIMER_GRAIN_MS = 2;

/** The engine's JobTimeoutError, as a failure's error text reads (`<name>: <message>`). */
const TIMEOUT_ERROR = /^JobTimeoutError:/;

/**
 * `Worker.timeoutMs`: a handler running longer than its queue's limit fails
 * the attempt (docs/configuration.md). Over every attempt its worker ended
 * (completed or failed; the worker's own `durationMs`, handler start to
 * settle, on its clock):
 *
 * - a completion took at most limit + lagMs (none ran to completion past it);
 * - a failure that took longer than limit + lagMs is a timeout (not the
 *   handler's own error after the limit had passed);
 * - a timeout failure took at least the limit (the timer did not fire early;
 *   2 ms of clock grain allowed),
 *   came from a queue that has one, and its worker recorded it within
 *   limit + slackMs of the handler's start (`job:started` to `job:failed`,
 *   node clock);
 * - each worker reported the scenario's limit for its queues.
 *
 * Judged: the attempts that reached the limit (timeouts, and anything that
 * ran past it). Unknown when none did.
 */
export function checkHandlerTimeout(history: readonly HistoryEvent[], _final: FinalState, bounds: HandlerTimeoutBounds): InvariantResult {
  const fleet = new Fleetline(history);
  const bad: { what: string; [k: string]: unknown }[] = [];
  const expected = bounds.timeoutMs > 0 ? bounds.timeoutMs : null;
  for (const w of fleet.allSettings()) {
    for (const [queue, s] of Object.entries(w.queues)) {
      if (expected !== null && (s.timeoutMs ?? null) !== expected) bad.push({ what: 'worker reports another timeout than the scenario set', workerId: w.workerId, queue, reported: s.timeoutMs ?? null, expected });
    }
  }
  const started = new Map<string, EventOf<'job:started'>>();
  const startOf = new Map<EventOf<'job:failed'>, EventOf<'job:started'> | undefined>();
  for (const e of history) {
    const key = e.type === 'job:started' || e.type === 'job:failed' ? `${e.jobId}/${e.attempt}/${e.workerId}` : '';
    if (e.type === 'job:started') started.set(key, e);
    else if (e.type === 'job:failed') startOf.set(e, started.get(key));
  }
  let timeouts = 0;
  let pastLimit = 0;
  const recordDelays: number[] = [];
  for (const life of jobLives(history).values()) {
    for (const h of life.holds) {
      const limit = fleet.queueSettings(h.claim.workerId, h.claim.queue)?.timeoutMs ?? expected;
      const who = { jobId: life.jobId, attempt: h.claim.attempt, workerId: h.claim.workerId };
      const done = h.completed?.e;
      const failed = h.failed?.e;
      const timedOut = failed !== undefined && TIMEOUT_ERROR.test(failed.error);
      if (timedOut && limit === null) {
        bad.push({ what: 'timed out on a queue without a timeout', ...who });
        continue;
      }
      if (limit === null) continue;
      if (done && done.durationMs > limit) {
        pastLimit++;
        if (done.durationMs > limit + bounds.lagMs) bad.push({ what: 'ran to completion past its timeout', ...who, durationMs: done.durationMs, timeoutMs: limit });
      }
      if (failed && !timedOut && failed.durationMs !== undefined && failed.durationMs > limit + bounds.lagMs) {
        pastLimit++;
        bad.push({ what: 'failed past its timeout with another error', ...who, durationMs: failed.durationMs, timeoutMs: limit, error: failed.error });
      }
      if (!failed || !timedOut) continue;
      timeouts++;
      if (failed.durationMs !== undefined && failed.durationMs < limit - TIMER_GRAIN_MS) bad.push({ what: 'timed out before its limit', ...who, durationMs: failed.durationMs, timeoutMs: limit });
      const start = startOf.get(failed);
      if (start?.nodeTime === undefined || failed.nodeTime === undefined) continue;
      const recordedMs = failed.nodeTime - start.nodeTime;
      recordDelays.push(recordedMs - limit);
      if (recordedMs > limit + bounds.slackMs) bad.push({ what: 'timeout recorded late', ...who, recordedAfterMs: recordedMs, timeoutMs: limit });
    }
  }
  const judged = timeouts + pastLimit;
  const worst = recordDelays.length ? Math.max(...recordDelays) : Number.NaN;
  return {
    name: 'handler-timeout',
    pass: bad.length > 0 ? false : judged === 0 ? 'unknown' : true,
    figure:
      `${fmt(judged)} attempts reached their handler timeout: ${fmt(timeouts)} failed with JobTimeoutError` +
      (recordDelays.length ? ` (recorded at most ${fmt(worst)} ms past the limit)` : '') +
      `, ${fmt(pastLimit)} ran past it; ${fmt(bad.length)} violations` +
      (judged === 0 ? '; no handler reached its timeout: nothing to judge' : ''),
    bound: `every attempt past its queue's timeoutMs (+${fmt(bounds.lagMs)} ms lag) failed with JobTimeoutError, recorded within timeoutMs + ${fmt(bounds.slackMs)} ms, none earlier than timeoutMs`,
    judged: { n: judged, what: 'attempts that reached their handler timeout' },
    ...(bad.length ? { examples: firstN(bad) } : {}),
  };
}

export const handlerTimeout: CheckerDef<HandlerTimeoutBounds> = {
  name: 'handler-timeout',
  says: "every handler that ran past its queue's timeoutMs failed the attempt with JobTimeoutError, recorded within the limit plus a slack; none ran to completion past it",
  check: checkHandlerTimeout,
  bounds: { timeoutMs: 'number', lagMs: 'number', slackMs: 'number' },
  defaults: { timeoutMs: 0, lagMs: 250, slackMs: 1_000 },
};
