/**
 * The one source of node time. Everything in engine/ and harness/ that needs
 * "now" or a delay takes a Clock through its constructor, so tests and
 * scenarios can skew or jump it per node. Due-ness and lease expiry are NOT
 * decided with this clock: they are decided by the database's now(), so a
 * skewed node cannot run a job early or steal a live lease.
 */
export interface Clock {
  /** Node wall-clock time in epoch milliseconds. */
  now(): number;
  /** Resolves after `ms` of this clock's time, or rejects with AbortError when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Optional: calls `fn` once after `ms` of this clock's time, unless the returned `cancel` runs first. A clock
   * without it still works; startTimer() then cuts a sleep short through an AbortSignal.
   */
  timer?(ms: number, fn: () => void): ClockTimer;
}

export interface ClockTimer {
  cancel(): void;
}

/**
 * A timer on `clock`: its own `timer` where it has one, else a sleep with an AbortController to cancel it. The worker
 * loop pauses and is woken early hundreds of times a second; Node's AbortSignals outlive young-generation
 * collections, and with one per pause AbortController and EventTarget code made about a third of what survived in a
 * worker's heap at 500 jobs/s (docs/performance.md).
 */
export function startTimer(clock: Clock, ms: number, fn: () => void): ClockTimer {
  if (clock.timer) return clock.timer(ms, fn);
  const cancelled = new AbortController();
  clock.sleep(ms, cancelled.signal).then(fn, () => {});
  return { cancel: () => cancelled.abort() };
}

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason;
  if (reason instanceof Error) return reason;
  const err = new Error('aborted');
  err.name = 'AbortError';
  return err;
}

/** A sleep made of a clock's timer: resolves when it fires, cancels it and rejects when `signal` aborts. */
function sleepOnTimer(start: (done: () => void) => ClockTimer, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const onAbort = () => {
      timer.cancel();
      reject(abortError(signal!));
    };
    const timer = start(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Real time. The only place in the codebase that reads Date.now() or calls setTimeout for delays. */
export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOnTimer((done) => this.timer(ms, done), signal);
  }

  timer(ms: number, fn: () => void): ClockTimer {
    const timeout = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(timeout) };
  }
}

/**
 * A node clock that runs `offsetMs` ahead of (or behind, when negative) a base
 * clock. `jump()` moves it, as an NTP step or an operator's `date -s` would.
 * Sleeps take the clock's elapsed time, which a step does not change: skew
 * changes what a node believes the time is, not how fast time passes.
 * `setRate()` changes how fast it passes, for a node whose timekeeping runs
 * slow (a starved VM, a host clock that loses time): at rate 0.5 its
 * readings advance half as fast as the base clock's, and a sleep of `ms`
 * lasts until they have advanced `ms`, twice as long on the base clock.
 */
export class SkewedClock implements Clock {
  /** The base clock's reading when the current rate took effect, and this clock's elapsed time then. */
  private anchorBase: number;
  private anchorElapsed: number;
  private rate = 1;
  /** The offset and every step since: now() is elapsed time plus this. */
  private stepMs: number;
  /** Timers under way, by the elapsed time they fire at: a change of rate re-times them. */
  private readonly pending = new Set<{ dueAt: number; fn: () => void; base?: ClockTimer }>();

  constructor(
    private readonly base: Clock,
    offsetMs = 0,
  ) {
    this.anchorBase = base.now();
    this.anchorElapsed = this.anchorBase;
    this.stepMs = offsetMs;
  }

  now(): number {
    return this.elapsedAt(this.base.now()) + this.stepMs;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOnTimer((done) => this.timer(ms, done), signal);
  }

  timer(ms: number, fn: () => void): ClockTimer {
    const t: { dueAt: number; fn: () => void; base?: ClockTimer } = { dueAt: this.elapsedAt(this.base.now()) + Math.max(0, ms), fn };
    this.pending.add(t);
    this.arm(t);
    return {
      cancel: () => {
        t.base?.cancel();
        this.pending.delete(t);
      },
    };
  }

  /** Steps the clock by `deltaMs` (positive: forward). Sleeps under way keep their length. */
  jump(deltaMs: number): void {
    this.stepMs += deltaMs;
  }

  /** From now on, runs at `rate` times the base clock's speed (> 0; 1 is true time). The reading does not step; sleeps under way are re-timed. */
  setRate(rate: number): void {
    if (!(rate > 0) || !Number.isFinite(rate)) throw new RangeError(`clock rate: expected a finite number above 0, got ${rate}`);
    const base = this.base.now();
    this.anchorElapsed = this.elapsedAt(base);
    this.anchorBase = base;
    this.rate = rate;
    for (const t of this.pending) {
      t.base?.cancel();
      this.arm(t);
    }
  }

  get skewMs(): number {
    return this.now() - this.base.now();
  }

  private elapsedAt(base: number): number {
    return this.anchorElapsed + (base - this.anchorBase) * this.rate;
  }

  private arm(t: { dueAt: number; fn: () => void; base?: ClockTimer }): void {
    const left = Math.max(0, t.dueAt - this.elapsedAt(this.base.now()));
    t.base = startTimer(this.base, left / this.rate, () => {
      this.pending.delete(t);
      t.fn();
    });
  }
}

/**
 * A clock that only moves when told to. For tests whose subject is time:
 * `advance()` moves now() and resolves every sleep that has come due.
 */
export class ManualClock implements Clock {
  private sleepers: { at: number; resolve: () => void }[] = [];

  constructor(private current = 0) {}

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOnTimer((done) => this.timer(ms, done), signal);
  }

  timer(ms: number, fn: () => void): ClockTimer {
    const sleeper = { at: this.current + Math.max(0, ms), resolve: fn };
    this.sleepers.push(sleeper);
    return { cancel: () => (this.sleepers = this.sleepers.filter((s) => s !== sleeper)) };
  }

  /** Moves time forward by `ms` and wakes every sleeper whose time has come. */
  advance(ms: number): void {
    this.set(this.current + ms);
  }

  /** Sets the absolute time (may move backwards, as a clock step can). */
  set(epochMs: number): void {
    this.current = epochMs;
    const due = this.sleepers.filter((s) => s.at <= this.current);
    this.sleepers = this.sleepers.filter((s) => s.at > this.current);
    for (const s of due) s.resolve();
  }
}

export const systemClock: Clock = new SystemClock();
