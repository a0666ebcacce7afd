import type { Clock } from '../../engine/clock.ts';
import type { Db } from '../../engine/db.ts';
import type { Logger } from '../../engine/log.ts';
import { PeriodicLoop } from '../../engine/periodic.ts';
import { QueueStateSampler, type QueueStateSnapshot } from '../../engine/metrics/queue-state-sampler.ts';
import type { HistoryRecorder } from './recorder.ts';

export interface AlertThresholds {
  oldestAgeSloMs: number;
  deadLetterDepthAlert: number;
  /** The xmin horizon held longer than this, ms: the signal a pinned horizon raises. */
  xminAgeAlertMs: number;
}

/**
 * Samples queue state once a second with the engine's own sampler (the same
 * queries /metrics serves) into `sample` history events, and records the
 * moment each alert signal crosses its threshold, up or down: that is how a
 * run shows when the incident was detectable and when it recovered.
 */
export class RunSampler {
  private readonly sampler: QueueStateSampler;
  private above = { age: false, dlq: false, xmin: false };
  private readonly loop: PeriodicLoop<void>;
  latest: QueueStateSnapshot | null = null;

  constructor(
    db: Db,
    clock: Clock,
    private readonly recorder: HistoryRecorder,
    private readonly thresholds: AlertThresholds,
    log: Logger,
    intervalMs = 1000,
  ) {
    this.sampler = new QueueStateSampler(db, clock, null, { intervalMs, doneCount: 'exact' }, log);
    this.loop = new PeriodicLoop({ clock, log, what: 'sample', intervalMs, runOnce: () => this.runOnce() });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One sample now; the run takes a last one after the drain. */
  async runOnce(): Promise<void> {
    await this.sampler.runOnce();
    const s = this.sampler.latest;
    if (!s) return;
    this.latest = s;
    this.recorder.record({
      type: 'sample',
      node: 'sampler',
      depthByQueue: s.depthByQueue,
      oldestUnclaimedAgeMs: s.oldestUnclaimedAgeMs,
      deadLetterDepth: s.deadLetterDepth,
      claimed: s.claimed,
      done: s.done,
      failed: s.failed,
      dead: s.dead,
      deadTuples: s.jobsDeadTuples,
      xminAgeMs: s.xminHorizonAgeMs,
    });
    const maxAge = Math.max(0, ...Object.values(s.oldestUnclaimedAgeMs));
    this.cross('oldest-unclaimed-age', 'age', maxAge, this.thresholds.oldestAgeSloMs, maxAge > this.thresholds.oldestAgeSloMs);
    this.cross('dead-letter-depth', 'dlq', s.deadLetterDepth, this.thresholds.deadLetterDepthAlert, s.deadLetterDepth >= this.thresholds.deadLetterDepthAlert);
    this.cross('xmin-horizon-age', 'xmin', s.xminHorizonAgeMs, this.thresholds.xminAgeAlertMs, s.xminHorizonAgeMs > this.thresholds.xminAgeAlertMs);
  }

  /** The alert signals over their thresholds at the last sample, for the live status line. */
  get firing(): string[] {
    const names = { age: 'oldest-age', dlq: 'dlq', xmin: 'xmin' } as const;
    return (Object.keys(names) as (keyof typeof names)[]).filter((k) => this.above[k]).map((k) => names[k]);
  }

  get oldestAgeSloMs(): number {
    return this.thresholds.oldestAgeSloMs;
  }

  private cross(signal: string, key: 'age' | 'dlq' | 'xmin', value: number, threshold: number, nowAbove: boolean): void {
    if (nowAbove === this.above[key]) return;
    this.above[key] = nowAbove;
    this.recorder.record({ type: 'alert:crossed', node: 'sampler', signal, value, threshold, direction: nowAbove ? 'up' : 'down' });
  }
}
