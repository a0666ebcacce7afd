import { startTimer, type Clock, type ClockTimer } from '../clock.ts';
import type { EngineEvents, Events } from '../events.ts';
import type { Logger } from '../log.ts';
import { redactSecrets } from '../redact.ts';

/** Repeats of one cause within this long of the line that showed it are counted, not printed. */
export const FOLD_MS = 10_000;
/** Causes folded at once; the failures of any further cause fold into one "other causes" line per queue. */
export const MAX_CAUSES = 50;
/** An error's first line is cut to this many characters. */
const MAX_ERROR_CHARS = 200;

/**
 * One line about one job: `job <id> <verb> on <queue>: <cause> (<detail>)`; folded repeats, one line:
 * `<verb> on <queue>: <cause> (<count> more in <span>; the last: job <id>, <detail>)`. Lines of the same level, verb, queue
 * and cause (numbers aside) fold: `cause` is what they share, `detail` what is this job's own.
 */
export interface JobLine {
  level: 'warn' | 'error';
  jobId: number;
  verb: string;
  queue: string;
  cause: string;
  detail: string;
}

interface Fold {
  level: JobLine['level'];
  /** `<verb> on <queue>: <cause>`, as the first line of the fold showed it. */
  what: string;
  /** When the line that opened this fold's window, or its last summary, was printed (node clock). */
  openedAt: number;
  /** Repeats since then, not yet printed. */
  count: number;
  lastAt: number;
  last?: JobLine;
  /** The fold of a queue's causes beyond MAX_CAUSES: its summary names the last one's cause. */
  overflow: boolean;
}

const plural = (n: number, one: string, many: string) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Rate-limits job lines in a storm. The rule: the first line of a cause (level, verb, queue and message, with
 * every run of digits counted as the same number, so `order 17 not found` and `order 18 not found` are one
 * cause) prints in full and opens a window of FOLD_MS. Further lines of that cause within the window (the same
 * job failing again included) are only counted; when it ends, one summary line gives the count, the span and the
 * last job, and a new window opens if they keep coming. A cause that stayed quiet for a whole window prints in
 * full again. With MAX_CAUSES causes open, a new one folds into `<verb> on <queue>, other causes`. So a storm
 * costs each cause one line per window, and a summary is never later than one window after the repeat it counts.
 * The logger's own RepeatFolder cannot do this: it folds identical messages only, and a line from another cause
 * ends a run, so two interleaved errors would print every line.
 */
export class JobLineFolder {
  private readonly folds = new Map<string, Fold>();
  private timer?: ClockTimer;
  private timerAt = Infinity;

  constructor(
    private readonly clock: Clock,
    private readonly print: (level: JobLine['level'], text: string) => void,
    private readonly foldMs = FOLD_MS,
    private readonly maxCauses = MAX_CAUSES,
  ) {}

  add(line: JobLine): void {
    const now = this.clock.now();
    this.settle(now);
    const what = `${line.verb} on ${line.queue}: ${line.cause}`;
    let key = `${line.level}\u0000${what.replace(/\d+/g, '#')}`;
    const overflow = !this.folds.has(key) && this.folds.size >= this.maxCauses;
    if (overflow) key = `${line.level}\u0000${line.verb}\u0000${line.queue}`;
    const fold = this.folds.get(key);
    if (!fold) {
      this.folds.set(key, { level: line.level, what: overflow ? `${line.verb} on ${line.queue}, other causes` : what, openedAt: now, count: 0, lastAt: now, overflow });
      this.print(line.level, `job ${line.jobId} ${what} (${line.detail})`);
      return;
    }
    fold.count++;
    fold.lastAt = now;
    fold.last = line;
    this.arm(fold.openedAt + this.foldMs);
  }

  /** Prints every count not yet printed (the worker stops). */
  flush(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.timerAt = Infinity;
    for (const fold of this.folds.values()) if (fold.count > 0) this.summary(fold, fold.lastAt);
    this.folds.clear();
  }

  /** Ends the windows that are over: a summary for those with repeats (their next window opens), the quiet ones are forgotten. */
  private settle(now: number): void {
    for (const [key, fold] of this.folds) {
      if (now - fold.openedAt < this.foldMs) continue;
      if (fold.count > 0) this.summary(fold, now);
      else this.folds.delete(key);
    }
  }

  private summary(fold: Fold, now: number): void {
    const last = fold.last!;
    const cause = fold.overflow ? `, ${last.cause}` : '';
    const more = `${fold.count.toLocaleString('en-US')} more in ${seconds(fold.lastAt - fold.openedAt)}`;
    this.print(fold.level, `${fold.what} (${more}; the last: job ${last.jobId}${cause}, ${last.detail})`);
    fold.openedAt = now;
    fold.count = 0;
  }

  /** One timer for every fold: it fires when the earliest window with repeats ends. */
  private arm(at: number): void {
    if (at >= this.timerAt) return;
    this.timer?.cancel();
    this.timerAt = at;
    this.timer = startTimer(this.clock, at - this.clock.now(), () => {
      this.timer = undefined;
      this.timerAt = Infinity;
      this.settle(this.clock.now());
      for (const fold of this.folds.values()) if (fold.count > 0) this.arm(fold.openedAt + this.foldMs);
    });
  }
}

/** An error's first line, its secrets redacted (before the cut, which could leave half a password unmatched), at most MAX_ERROR_CHARS. */
export function errorLine(text: string): string {
  const first = redactSecrets(text).trim().split('\n', 1)[0].trim();
  return first.length > MAX_ERROR_CHARS ? `${first.slice(0, MAX_ERROR_CHARS - 1)}…` : first;
}

/** Why a job was dead-lettered, in an operator's words, from its dead letter's code and message. */
function deadCause(e: EngineEvents['job:dead']): string {
  switch (e.code) {
    case 'attempts_exhausted':
    case 'timeout':
    case 'lease_expired':
      return `attempt budget exhausted; last error ${errorLine(e.reason.replace(/^attempts exhausted: /, ''))}`;
    case 'crash_loop':
      return `crash loop convicted: ${errorLine(e.reason)}`;
    case 'operator':
      return errorLine(e.reason);
  }
}

export interface WorkerLogOptions {
  events: Events;
  log: Logger;
  clock: Clock;
  /** Only this worker's failures, lost leases and hand-backs count (an Events may be shared). */
  workerId: string;
  /** The rescuer's crash limit: a rescued job's crash is shown as `crash N/maxCrashes`. */
  maxCrashes: number;
  foldMs?: number;
  maxCauses?: number;
}

/**
 * What a worker tells its operator, derived from its events in this one place: a line per failed attempt, lost
 * lease and lease taken back from a dead or stalled worker (warn), per dead letter, a crash-loop conviction
 * included (error), folded by JobLineFolder in a storm, and a last line with the counts when it stops (info).
 * Completions are counted, not logged: `completed` is incremented by the job runs themselves, so the hot path
 * builds no event for them.
 */
export class WorkerLog {
  /** Jobs this worker completed. */
  completed = 0;
  private failed = 0;
  private dead = 0;
  private handedBack = 0;
  private leasesLost = 0;
  private startedAt = Number.NaN;
  private readonly folder: JobLineFolder;
  private unsubscribe: (() => void)[] = [];

  constructor(private readonly o: WorkerLogOptions) {
    this.folder = new JobLineFolder(o.clock, (level, text) => o.log[level](text), o.foldMs, o.maxCauses);
  }

  start(): void {
    if (this.unsubscribe.length > 0) return;
    this.startedAt = this.o.clock.now();
    const { events, workerId } = this.o;
    this.unsubscribe = [
      events.on('job:failed', (e) => e.workerId === workerId && this.jobFailed(e)),
      events.on('job:dead', (e) => this.jobDead(e)),
      events.on('lease:lost', (e) => e.workerId === workerId && this.leaseLost(e)),
      events.on('lease:rescued', (e) => this.leaseRescued(e)),
      events.on('lease:released', (e) => e.workerId === workerId && this.handedBack++),
    ];
  }

  /** The worker stopped: the folded counts, then `worker stopped: …` with this run's totals. Nothing if it never started. */
  stop(): void {
    if (this.unsubscribe.length === 0) return;
    for (const off of this.unsubscribe.splice(0)) off();
    this.folder.flush();
    const n = (x: number) => x.toLocaleString('en-US');
    this.o.log.info(
      `worker stopped: ${n(this.completed)} completed, ${n(this.failed)} failed, ${n(this.dead)} dead, ${n(this.handedBack)} handed back, ` +
        `${plural(this.leasesLost, 'lease', 'leases')} lost, ran ${seconds(this.o.clock.now() - this.startedAt)}`,
    );
  }

  private jobFailed(e: EngineEvents['job:failed']): void {
    this.failed++;
    const budget = `attempt ${e.attempt}/${e.maxAttempts}`;
    const next =
      e.attempt >= e.maxAttempts ? 'no attempt left' : `retry at ${new Date(e.retryAt).toISOString()}, in ${seconds(Math.max(0, e.retryAt - e.dbFailedAt))}`;
    this.folder.add({ level: 'warn', jobId: e.jobId, verb: 'failed', queue: e.queue, cause: errorLine(e.error), detail: `${budget}; ${next}` });
  }

  private jobDead(e: EngineEvents['job:dead']): void {
    this.dead++;
    this.folder.add({ level: 'error', jobId: e.jobId, verb: 'dead-lettered', queue: e.queue, cause: deadCause(e), detail: `after ${plural(e.attempt, 'attempt', 'attempts')}` });
  }

  private leaseLost(e: EngineEvents['lease:lost']): void {
    this.leasesLost++;
    const when = { heartbeat: 'its heartbeat found it gone; the handler is aborted', complete: 'its completion was refused', fail: 'its failure was refused', expired: 'no renewal landed for a whole lease (the database out of reach); the handler is aborted' }[e.phase];
    this.folder.add({ level: 'warn', jobId: e.jobId, verb: 'lost its lease', queue: e.queue, cause: `${when}, this attempt's outcome is not recorded`, detail: `attempt ${e.attempt}` });
  }

  /** A dead one gets its dead-letter line (job:dead follows); the others run again. */
  private leaseRescued(e: EngineEvents['lease:rescued']): void {
    if (e.dead) return;
    const owner = e.owner ?? 'unknown';
    const cause = e.crashed ? `its worker ${owner} died holding it; it runs again alone` : `its lease expired while worker ${owner} was alive; it runs again`;
    const detail = e.crashed ? `crash ${e.crashCount}/${this.o.maxCrashes}, attempt ${e.attempts}` : `attempt ${e.attempts}`;
    this.folder.add({ level: 'warn', jobId: e.jobId, verb: 'was taken back', queue: e.queue, cause, detail });
  }
}
