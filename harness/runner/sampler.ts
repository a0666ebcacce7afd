import type pg from 'pg';
import type { Clock } from '../../engine/clock.ts';
import { Db } from '../../engine/db.ts';
import { asSubquery } from '../../engine/sql.ts';
import type { Logger } from '../../engine/log.ts';
import { PeriodicLoop } from '../../engine/periodic.ts';
import type { StampedeMetrics } from '../../engine/metrics/registry.ts';
import { QueueStateSampler, type QueueStateSnapshot } from '../../engine/metrics/queue-state-sampler.ts';
import { NO_ROWS, slotIdOf, type SampledQueue } from '../history.ts';
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
  queues: Record<string, SampledQueue>;
  done: number;
}

/**
 * The engine sampler's Db, with the harness's own query joined to each of the
 * sampler's rounds: the round is one statement, and the harness's reading
 * becomes one more column of it, so both read one snapshot at one now(). The
 * engine's code and SQL run unchanged; only its connection carries one more
 * read.
 */
class ReadAlongDb extends Db {
  reading: HarnessReading | null = null;
  /** The sampler's round (QueueStateSampler.roundQuery), the one statement read along with; asked at each query, as a mutant may patch it. */
  round: () => string = () => '';

  override transaction<T>(fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
    this.reading = null;
    return super.transaction((tx) => fn(this.readingAlong(tx)));
  }

  /** The client, its query() of the round answered by the round joined with the harness's reading. */
  private readingAlong(tx: pg.PoolClient): pg.PoolClient {
    const query = async (text: string, params?: unknown[]) => {
      if (text !== this.round()) return tx.query(text, params);
      const res = await tx.query(`SELECT e.*, to_json(h) AS harness_reading FROM ${asSubquery(text)} e, ${asSubquery(q.HarnessQueueState)} h`, params);
      this.reading = toReading(res.rows[0].harness_reading);
      return res;
    };
    return new Proxy(tx, { get: (target, key) => (key === 'query' ? query : Reflect.get(target, key)) });
  }
}

function toReading(r: { queues: Record<string, SampledQueue>; dead_letters: Record<string, number>; done: number; xmin_age_ms: number }): HarnessReading {
  const queues = { ...r.queues };
  for (const [queue, n] of Object.entries(r.dead_letters)) queues[queue] = { ...(queues[queue] ?? NO_ROWS), deadLetters: n };
  return {
    queues,
    // Only queues with a due job, as the engine's gauge: a queue whose jobs all wait for later has no age.
    oldestUnclaimedAgeMs: Object.fromEntries(Object.entries(queues).filter(([, f]) => f.due > 0).map(([queue, f]) => [queue, f.oldestMs])),
    deadLetterDepth: Object.values(r.dead_letters).reduce((a, b) => a + b, 0),
    done: r.done,
    xminAgeMs: r.xmin_age_ms,
  };
}

/**
 * Samples queue state once a second into `sample` history events: with the
 * engine's own sampler (the same queries /metrics serves), whose figures are
 * under test, and in the same transaction with the harness's own query, whose
 * figures the oracle trusts. Records the moment each alert signal crosses its
 * threshold, up or down, by the harness's figures: that is how a run shows
 * when the incident was detectable and when it recovered.
 */
export class RunSampler {
  private readonly db: ReadAlongDb;
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
    /** Where the engine's sampler publishes its gauges (the run's Prometheus scrapes them); null: nowhere. */
    metrics: StampedeMetrics | null = null,
    intervalMs = 1000,
  ) {
    this.db = new ReadAlongDb({ ...db.options, maxConnections: 1, applicationName: 'stampede:harness-sampler' });
    // The round reads the whole table here (the exact done count, the harness's GROUP BY): it may take longer than production's.
    this.sampler = new QueueStateSampler(this.db, clock, metrics, { intervalMs, doneCount: 'exact', statementTimeoutMs: 10_000 }, log);
    this.db.round = () => this.sampler.roundQuery();
    this.loop = new PeriodicLoop({ clock, log, what: 'sample', intervalMs, runOnce: () => this.runOnce() });
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.db.close();
  }

  private sampling: Promise<void> = Promise.resolve();

  /**
   * One sample now; the run takes a last one after the drain, maybe while the
   * loop takes one: samples run one at a time, since each reads the reading its
   * own transaction left on the Db.
   */
  runOnce(): Promise<void> {
    const next = this.sampling.then(() => this.sample());
    this.sampling = next.catch(() => {});
    return next;
  }

  private async sample(): Promise<void> {
    // A failed read (an outage the run injected) throws here and records nothing: the loop carries on.
    const s = await this.sampler.runOnce();
    this.latest = s;
    const own = this.db.reading!;
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
      queues: Object.fromEntries(
        Object.entries(s.queues).map(([queue, f]) => [
          queue,
          { pending: f.pending, failed: f.failed, due: f.due, claimed: f.claimed, overdue: f.leasesOverdue, deadLetters: f.deadLetters, oldestMs: f.oldestUnclaimedAgeMs, estimated: f.depthEstimated, deadLettersEstimated: f.deadLettersEstimated },
        ]),
      ),
      harness: own,
    });
    const maxAge = Math.max(0, ...Object.values(own.oldestUnclaimedAgeMs));
    const t = this.thresholds;
    this.cross('oldest-unclaimed-age', 'age', maxAge, t.oldestAgeSloMs, maxAge > t.oldestAgeSloMs);
    this.cross('dead-letter-depth', 'dlq', own.deadLetterDepth, t.deadLetterDepthAlert, own.deadLetterDepth >= t.deadLetterDepthAlert);
    this.cross('xmin-horizon-age', 'xmin', own.xminAgeMs, t.xminAgeAlertMs, own.xminAgeMs > t.xminAgeAlertMs);
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

/**
 * The rounds the workers' elected sampler wrote over the run, read back from
 * the harness's log of stampede.queue_state_rounds (harness.sql), each into the
 * history at the moment it was written (the host's clock, as a node's report
 * is): one-round-per-interval sets them beside the workers' exits.
 */
export async function recordSamplerRounds(db: Db, recorder: HistoryRecorder): Promise<void> {
  for (const r of (await db.query(q.SamplerRounds)).rows) {
    // The node is the leader's worker slot (`worker-1.2` is slot 1's second process), as its other events are.
    recorder.recordReported({ type: 'sampler:round', node: slotIdOf(String(r.leader)), roundNo: r.round_no, leader: r.leader }, r.written_at_ms);
  }
}

