import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface HandlersWithinConcurrencyBounds {
  /** How far past another handler's start a handler's computed end may reach and still count as ended before it, ms. */
  slackMs: number;
}

/** One handler run: from its `job:started` to its end, on its process's clock. */
interface Run {
  jobId: number;
  attempt: number;
  startAt: number;
  /** Its end, once known; +Infinity when its process died with it running; NaN while unknown. */
  endAt: number;
}

/** One worker process's life on its node, with what it reported of itself and the handlers it started. */
interface Life {
  node: string;
  workerId?: string;
  concurrency?: number;
  /** Whether it ended other than by a clean exit (killed, crashed): a handler it never reported ended ran until then. */
  died: boolean;
  runs: Run[];
  /** Started and not yet ended, by `jobId:attempt` (a hand-back reruns an attempt, so a key can start again). */
  open: Map<string, Run[]>;
}

/** The node-clock instant of an event of a worker process: its `nodeTime`, the clock its durations are measured on. */
const at = (e: HistoryEvent) => e.nodeTime ?? e.t;

/**
 * Worker.concurrency is honoured: a worker process never runs more handlers
 * at once than its `concurrency` (docs/configuration.md: "jobs running at
 * once in one worker process"), as its `worker:settings` report it. Judged
 * per process (a restarted process under the same worker id starts from
 * nothing: a node's life runs from its `process:started` to the next).
 *
 * A handler runs from its `job:started` to that instant plus the
 * `durationMs` of its `job:completed` or `job:failed` (or the `handlerMs` of
 * a `lease:lost` that came after it returned), not to the completion event:
 * completions are written in batches after the slot has freed and taken the
 * next job. A handler aborted while it ran (`lease:lost` without
 * `handlerMs`, `job:cancelled`, `lease:released` at the grace's end) ends at
 * that event: the abort follows it at once, so the slot frees no earlier. One
 * handed back by `job:deferred` (written after its slot freed) or never
 * reported ended in a process that lived on has no known end: it counts at
 * its own start and no later. One never reported ended in a process that was
 * killed ran until the death, after which that process started nothing.
 *
 * Timing: every instant is the process's own clock (`nodeTime`, integer
 * ms), the clock `durationMs` is measured on, so a clock running slow or
 * stepped forward cancels out; a step back while handlers run would not, so
 * do not judge a worker whose clock is stepped back. A start's `nodeTime` is
 * read just after the run's own start instant, in the same synchronous
 * code, but a millisecond boundary, a pause or the machine descheduling the
 * process can fall between the two reads, and the computed end then lies
 * past the true one by as much (on the shared 2-core machine: 1 ms often,
 * 2 ms once in 4,800 starts of priority-starvation's 50 ms handlers); the
 * handler a freed slot starts is stamped no earlier than the true end. So an
 * end and the next start in the same millisecond are not an overlap, and
 * neither is an end up to `slackMs` (10) past a start: a real overlap from an
 * extra slot lasts a whole handler (3 s in claim-ahead). Counted at each
 * start, in the order the process reported them: the handlers started
 * before it whose end is more than `slackMs` after it, plus itself.
 *
 * Unknown when nothing was judged, and when no process ever ran as many
 * handlers as its concurrency: a bound never approached vouches for nothing.
 */
export function checkHandlersWithinConcurrency(history: readonly HistoryEvent[], _final: FinalState, bounds: HandlersWithinConcurrencyBounds): InvariantResult {
  const lives: Life[] = [];
  const current = new Map<string, Life>();
  const open = (node: string) => {
    const life: Life = { node, died: false, runs: [], open: new Map() };
    lives.push(life);
    current.set(node, life);
    return life;
  };
  const lifeOf = (node: string) => current.get(node) ?? open(node);
  /** Ends the earliest open run of `jobId:attempt` in the node's life at `endAt` (NaN: its end is not known). */
  const end = (node: string, jobId: number, attempt: number, endOf: (run: Run) => number) => {
    const runs = current.get(node)?.open.get(`${jobId}:${attempt}`);
    const run = runs?.shift();
    if (run) run.endAt = endOf(run);
  };
  const after = (ms: number | null | undefined, e: HistoryEvent) => (run: Run) => (typeof ms === 'number' && Number.isFinite(ms) ? run.startAt + ms : at(e));

  for (const e of history) {
    if (e.type === 'process:started' && e.role === 'worker') open(e.node);
    else if (e.type === 'process:exited' && e.role === 'worker') {
      const life = current.get(e.node);
      if (life && !(e.code === 0 && e.signal === null)) life.died = true;
    } else if (e.type === 'worker:settings') {
      // A history without process starts (a hand-made one, a peer's): each report of settings is a new process.
      const known = current.get(e.node);
      const life = known && known.workerId === undefined ? known : open(e.node);
      life.workerId = e.workerId;
      life.concurrency = e.concurrency;
    } else if (e.type === 'job:started') {
      const life = lifeOf(e.node);
      const run: Run = { jobId: e.jobId, attempt: e.attempt, startAt: at(e), endAt: Number.NaN };
      life.runs.push(run);
      const key = `${e.jobId}:${e.attempt}`;
      (life.open.get(key) ?? life.open.set(key, []).get(key)!).push(run);
    } else if (e.type === 'job:completed' || e.type === 'job:failed') end(e.node, e.jobId, e.attempt, after(e.durationMs, e));
    else if (e.type === 'lease:lost') end(e.node, e.jobId, e.attempt, after(e.handlerMs, e));
    else if (e.type === 'job:cancelled' || e.type === 'lease:released') end(e.node, e.jobId, e.attempt, () => at(e));
    else if (e.type === 'job:deferred') end(e.node, e.jobId, e.attempt, () => Number.NaN);
  }

  const slack = bounds.slackMs;
  const over: unknown[] = [];
  const peaks: { workerId: string; peak: number; concurrency: number }[] = [];
  let judged = 0;
  let endUnknown = 0;
  let unjudged = 0;
  for (const life of lives) {
    if (life.concurrency === undefined) {
      unjudged += life.runs.length;
      continue;
    }
    let active: Run[] = [];
    let peak = 0;
    for (const run of life.runs) {
      const endAt = Number.isNaN(run.endAt) && life.died ? Number.POSITIVE_INFINITY : run.endAt;
      active = active.filter((a) => a.endAt - slack > run.startAt);
      const running = active.length + 1;
      judged++;
      if (running > peak) peak = running;
      if (running > life.concurrency) {
        over.push({ workerId: life.workerId, node: life.node, concurrency: life.concurrency, running, jobId: run.jobId, attempt: run.attempt, startedAt: run.startAt, alongside: active.map((a) => a.jobId) });
      }
      if (Number.isNaN(endAt)) endUnknown++;
      else active.push({ ...run, endAt });
    }
    peaks.push({ workerId: life.workerId ?? life.node, peak, concurrency: life.concurrency });
  }

  const atBound = peaks.filter((p) => p.peak >= p.concurrency).length;
  const peakText = peaks.map((p) => `${p.workerId} ${fmt(p.peak)}/${fmt(p.concurrency)}`).join(', ');
  const figure =
    `${fmt(over.length)} starts past the worker's concurrency, over ${fmt(judged)} handler starts in ${fmt(peaks.length)} worker processes` +
    ` (peak/concurrency: ${peakText || 'none'}; ${fmt(atBound)} reached it)` +
    (endUnknown ? `; ${fmt(endUnknown)} handlers with no known end counted at their start only` : '') +
    (unjudged ? `; ${fmt(unjudged)} handlers of processes that did not report their concurrency not judged` : '');
  const base = {
    name: 'handlers-within-concurrency',
    bound: `handlers running at once in one worker process <= its concurrency (an end within ${fmt(slack)} ms after a start is not an overlap)`,
    judged: { n: judged, what: 'handler starts, each counting the handlers its process ran then' },
    figure,
  };
  if (over.length > 0) return { ...base, pass: false, examples: firstN(over) };
  if (judged === 0) return { ...base, pass: 'unknown', figure: `${figure}: nothing judged` };
  if (atBound === 0) return { ...base, pass: 'unknown', figure: `${figure}: no worker ran as many handlers as its concurrency, so the bound was never approached` };
  return { ...base, pass: true };
}

export const handlersWithinConcurrency: CheckerDef<HandlersWithinConcurrencyBounds> = {
  name: 'handlers-within-concurrency',
  says: 'a worker process never runs more handlers at once than its concurrency (judged from each start and its duration)',
  check: checkHandlersWithinConcurrency,
  bounds: { slackMs: 'number' },
  defaults: { slackMs: 10 },
};
