import type { HistoryRecorder } from './recorder.ts';
import type { LoadGenerator } from './generator.ts';
import type { RunSampler } from './sampler.ts';

/**
 * The live line: elapsed time, offered vs achieved rate, depth,
 * oldest-unclaimed-age against its SLO, dead-letter depth, faults so far, and
 * which alert signals are over their thresholds now. Redrawn in place on
 * a terminal; on a CI log, a plain line every few seconds.
 */
export class ProgressLine {
  private lastOffered = 0;
  private lastAcked = 0;
  private lastT = 0;
  private lastPrintT = -Infinity;
  private readonly tty = Boolean(process.stderr.isTTY);
  /** Faults injected so far, counted as they are recorded: filtering the whole history each second grew with the run. */
  private faults = 0;

  constructor(
    private readonly recorder: HistoryRecorder,
    private readonly generator: LoadGenerator,
    private readonly sampler: RunSampler,
    private readonly plainEveryMs = 5000,
  ) {
    recorder.onEvent((e) => {
      if (e.type === 'fault:injected' && e.detail.phase === undefined) this.faults++;
    });
  }

  /**
   * Starts the rate window now: the runner calls it as the load starts, so the first line's rates are over load time
   * only. Without it the first window also spanned the set-up (workers starting, preload), and a 500/s run's first
   * line read "offered 48/s".
   */
  begin(): void {
    [this.lastOffered, this.lastAcked, this.lastT] = [this.generator.stats.offered, this.generator.stats.acknowledged, this.recorder.now()];
  }

  update(phase: string): void {
    const t = this.recorder.now();
    if (!this.tty && t - this.lastPrintT < this.plainEveryMs) return;
    const dt = Math.max(1, t - this.lastT) / 1000;
    const s = this.generator.stats;
    const offered = (s.offered - this.lastOffered) / dt;
    const achieved = (s.acknowledged - this.lastAcked) / dt;
    [this.lastOffered, this.lastAcked, this.lastT, this.lastPrintT] = [s.offered, s.acknowledged, t, t];
    const latest = this.sampler.latest;
    const depth = latest ? Object.values(latest.depthByQueue).reduce((a, b) => a + b, 0) : 0;
    const age = latest ? Math.max(0, ...Object.values(latest.oldestUnclaimedAgeMs)) : 0;
    const line =
      `${phase.padEnd(5)} ${(t / 1000).toFixed(1).padStart(6)}s  offered ${offered.toFixed(0).padStart(4)}/s  achieved ${achieved.toFixed(0).padStart(4)}/s` +
      `  depth ${String(depth).padStart(6)}  oldest ${fmtAge(age).padStart(6)}/${fmtAge(this.sampler.oldestAgeSloMs)} SLO  dlq ${latest?.deadLetterDepth ?? 0}` +
      `  faults ${this.faults}  alerts ${this.sampler.firing.join(',') || 'none'}`;
    process.stderr.write(this.tty ? `\r${line}\x1b[K` : `${line}\n`);
  }

  done(): void {
    if (this.tty) process.stderr.write('\n');
  }
}

/** An age for the status line: seconds below 100 s, else minutes (a clock step makes ages of an hour). */
function fmtAge(ms: number): string {
  return ms < 100_000 ? `${(ms / 1000).toFixed(1)}s` : `${(ms / 60_000).toFixed(0)}m`;
}
