import type { Clock } from '../../engine/clock.ts';
import type { Db } from '../../engine/db.ts';
import type { Logger } from '../../engine/log.ts';
import { PeriodicLoop } from '../../engine/periodic.ts';
import { QueueStateSampler, type QueueStateSnapshot } from '../../engine/metrics/queue-state-sampler.ts';
import { harnessQueries as q } from './queries.ts';
import type { HistoryRecorder } from './recorder.ts';

export interface AlertThresholds {
  oldestAgeSloMs: number;
  deadLetterDepthAlert: number;
  /** The xmin horizon held longer than this, ms: the signal a pinned horizon raises. */
  xminAgeAlertMs: number;
}

/** The harness's own reading of queue state (not the engine's sampler). */
export interface HarnessReading {
  oldestUnclaimedAgeMs: Record<string, number>;
  deadLetterDepth: number;
  xminAgeMs: number;
}

/**
 * Samples queue state once a second into `sample` history events: with the
 * engine's own sampler (the same queries /metrics serves), whose figures are
 * under test, and just before and after it with the harness's own query,
 * whose figures the oracle trusts. Records the moment each alert signal crosses its
 * threshold, up or down, by the harness's figures: that is how a run shows
 * when the incident was detectable and when it recovered.
 */
export class RunSampler {
  private readonly sampler: QueueStateSampler;
  private above = { age: false, dlq: false, xmin: false };
  private readonly loop: PeriodicLoop<void>;
  latest: QueueStateSnapshot | null = null;

  constructor(
    private readonly db: Db,
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
    // The harness reads before and after the engine: the engine's figure must lie between the two
    // (the oldest job may be claimed in between, which no fixed tolerance covers).
    const startedT = this.recorder.now();
    const before = await this.readOwn();
    // Its own return value, not `latest`: a failed read must not pair a stale snapshot with fresh readings.
    const s = await this.sampler.runOnce();
    this.latest = s;
    const own = await this.readOwn();
    if (!own || !before) return;
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
      harness: { ...own, oldestBeforeMs: before.oldestUnclaimedAgeMs, afterMs: this.recorder.now() - startedT },
    });
    const maxAge = Math.max(0, ...Object.values(own.oldestUnclaimedAgeMs));
    const t = this.thresholds;
    this.cross('oldest-unclaimed-age', 'age', maxAge, t.oldestAgeSloMs, maxAge > t.oldestAgeSloMs);
    this.cross('dead-letter-depth', 'dlq', own.deadLetterDepth, t.deadLetterDepthAlert, own.deadLetterDepth >= t.deadLetterDepthAlert);
    this.cross('xmin-horizon-age', 'xmin', own.xminAgeMs, t.xminAgeAlertMs, own.xminAgeMs > t.xminAgeAlertMs);
  }

  /** The harness's own query; null when the database is away (an outage the run injected): no sample then. */
  private async readOwn(): Promise<HarnessReading | null> {
    try {
      const r = (await this.db.query(q.HarnessQueueState)).rows[0];
      return { oldestUnclaimedAgeMs: r.oldest as Record<string, number>, deadLetterDepth: r.dead_letters as number, xminAgeMs: r.xmin_age_ms as number };
    } catch {
      return null;
    }
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
