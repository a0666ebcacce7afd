import type { Clock } from '../../engine/clock.ts';
import type { Db } from '../../engine/db.ts';
import { enqueue } from '../../engine/enqueue.ts';
import { isRetryableDbError, ValidationError } from '../../engine/errors.ts';
import type { Arrival } from '../load/types.ts';
import { opKey } from '../load/op-key.ts';
import { padPayload } from '../load/mix.ts';
import type { HistoryRecorder } from './recorder.ts';

export interface GeneratorOptions {
  /** Enqueues in flight at once; more waiting means the generator itself fell behind. */
  maxInFlight: number;
  /** An offer sent this much after its intended time is recorded as late (coordinated omission made visible). */
  lateMs: number;
  /** Attempt budget given to each job, but those of a queue in `queueBudgets`. */
  maxAttempts: number;
  /** Queues whose jobs give no budget of their own: each takes its queue's (the scenario's `queueBudgets`). */
  queueBudgets?: Record<string, number>;
  /**
   * Enqueues one arrival through another engine (a peer's adapter, harness/engines/): its answer's job id
   * (the history's) and run_at (epoch ms). Default: stampede's enqueue.
   */
  enqueue?: (a: Arrival) => Promise<{ jobId: number; runAtMs: number }>;
  /** Each offer's W3C traceparent, as the request that enqueues it would carry (the scenario's `otel`); none when absent. */
  traceparentOf?: (op: number) => string;
}

export interface GeneratorStats {
  offered: number;
  acknowledged: number;
  unknown: number;
  failed: number;
  late: number;
}

/**
 * The open-model load: each planned job is offered at its intended time
 * whether or not the system keeps up, one committed INSERT each. The history
 * gets intended and actual send times, so a stall cannot hide behind a
 * generator that waited for it (coordinated omission). An enqueue whose
 * acknowledgement was lost is recorded as unknown, not failed: it may exist.
 */
export class LoadGenerator {
  readonly stats: GeneratorStats = { offered: 0, acknowledged: 0, unknown: 0, failed: 0, late: 0 };
  private inFlight = new Set<Promise<void>>();
  /** Offers dropped while silenced; undefined: not silenced. */
  private silenced: number | undefined;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly recorder: HistoryRecorder,
    private readonly options: GeneratorOptions,
  ) {}

  /** Offers every arrival (ms after `loadStartT`, history time) until the plan ends or `signal` aborts; then waits for the ones in flight. */
  async run(arrivals: Iterable<Arrival>, loadStartT: number, signal: AbortSignal): Promise<void> {
    for (const a of arrivals) {
      if (signal.aborted) break;
      const intendedT = loadStartT + a.atMs;
      const waitMs = intendedT - this.recorder.now();
      if (waitMs > 1) await this.clock.sleep(waitMs, signal).catch(() => {});
      if (signal.aborted) break;
      if (this.silenced !== undefined) {
        this.silenced++;
        continue;
      }
      while (this.inFlight.size >= this.options.maxInFlight) await Promise.race(this.inFlight);
      const p = this.offer(a, intendedT).finally(() => this.inFlight.delete(p));
      this.inFlight.add(p);
    }
    await Promise.all(this.inFlight);
  }

  /**
   * The producers fall quiet: every offer due from now on is dropped (never
   * sent, never recorded) until the returned function is called, which
   * returns how many were dropped. A fault's lull (harness/faults/inject).
   */
  silence(): () => number {
    this.silenced = 0;
    return () => {
      const n = this.silenced ?? 0;
      this.silenced = undefined;
      return n;
    };
  }

  /** The maxAttempts stampede's enqueue gives `a` (null: none, its queue's budget applies). */
  private ownBudget(a: Arrival): number | null {
    return this.options.queueBudgets?.[a.queue] === undefined ? this.options.maxAttempts : null;
  }

  private async enqueueStampede(a: Arrival): Promise<{ jobId: number; runAtMs: number }> {
    const ownBudget = this.ownBudget(a);
    const payload = { kind: a.kind, op: a.op, params: a.params };
    const job = await enqueue(this.db, a.queue, a.payloadBytes === undefined ? payload : padPayload(payload, a.payloadBytes), {
      priority: a.priority,
      idempotencyKey: opKey(a.op),
      ...(ownBudget === null ? {} : { maxAttempts: ownBudget }),
      ...(a.params.delayMs ? { delayMs: a.params.delayMs } : {}),
      ...(a.fairnessKey ? { fairnessKey: a.fairnessKey } : {}),
      ...(this.options.traceparentOf ? { traceparent: this.options.traceparentOf(a.op) } : {}),
    });
    return { jobId: job.id, runAtMs: job.runAt.getTime() };
  }

  private async offer(a: Arrival, intendedT: number): Promise<void> {
    const node = 'generator';
    this.stats.offered++;
    this.recorder.record({ type: 'enqueue:invoke', node, op: a.op, queue: a.queue, intendedAt: intendedT, kind: a.kind, ...(a.payloadBytes !== undefined ? { payloadBytes: a.payloadBytes } : {}) });
    const sentAt = this.recorder.now();
    if (sentAt - intendedT > this.options.lateMs) {
      this.stats.late++;
      this.recorder.record({ type: 'enqueue:late', node, op: a.op, intendedAt: intendedT, sentAt });
    }
    try {
      const job = await (this.options.enqueue ?? ((x: Arrival) => this.enqueueStampede(x)))(a);
      this.stats.acknowledged++;
      const delayed = a.params.delayMs ? { delayMs: a.params.delayMs } : {};
      const keyed = a.fairnessKey ? { fairnessKey: a.fairnessKey } : {};
      const traced = this.options.traceparentOf && !this.options.enqueue ? { traceparent: this.options.traceparentOf(a.op) } : {};
      const budget = this.options.enqueue ? {} : { ownBudget: this.ownBudget(a) };
      this.recorder.record({ type: 'enqueue:ok', node, op: a.op, jobId: job.jobId, queue: a.queue, runAt: job.runAtMs, intendedAt: intendedT, sentAt, ...delayed, ...keyed, ...traced, ...budget });
    } catch (err) {
      const error = (err as Error).message;
      if (err instanceof ValidationError || !isRetryableDbError(err)) {
        this.stats.failed++;
        this.recorder.record({ type: 'enqueue:fail', node, op: a.op, queue: a.queue, error });
      } else {
        // The connection went away mid-statement: the INSERT may have committed. Unknown, not failed.
        this.stats.unknown++;
        this.recorder.record({ type: 'enqueue:info', node, op: a.op, queue: a.queue, error });
      }
    }
  }
}
