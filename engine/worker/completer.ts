import { setImmediate as endOfTurn } from 'node:timers/promises';
import type { Clock } from '../clock.ts';
import { prepared, type Db } from '../db.ts';
import type { Logger } from '../log.ts';
import { workerQueries as q } from './queries.ts';
import { RESULT_WRITE_RETRY_MS, writeResult } from './result-write.ts';

/**
 * A completion handed to the batcher, told how it went. An object with two methods (the job's run itself), not a promise
 * per job: a promise, its resolvers and the async frames awaiting it were the largest allocation per job of a drain.
 */
export interface PendingCompletion {
  readonly job: { readonly id: number; readonly leaseToken: string };
  /** The UPDATE committed: `completed` is false when the fence refused it (the lease was lost). */
  completionWritten(completed: boolean): void;
  /** The completion could not be written within the retry window. */
  completionFailed(err: unknown): void;
}

/**
 * Batches job completions: while one UPDATE is in flight, the completions
 * that arrive meanwhile wait and go together in the next one. Under load
 * that turns N round trips into a few; when idle a completion goes at the
 * end of the event loop's turn, with whatever else finished in it.
 * Each completion is fenced on its lease token; `completionWritten(false)`
 * says the fence refused it (the lease was lost).
 */
export class CompletionBatcher {
  private pending: PendingCompletion[] = [];
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** How long to keep retrying a completion through a dropped connection before giving up (the lease will expire and the job rerun). */
    private readonly retryForMs = RESULT_WRITE_RETRY_MS,
    /** Told of every failed try, for the worker's count of database errors. */
    private readonly onError?: (err: unknown) => void,
  ) {}

  complete(completion: PendingCompletion): void {
    this.pending.push(completion);
    if (!this.flushing) this.flushing = this.flushLoop();
  }

  /** Resolves when everything handed in so far has been written (or given up on). */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async flushLoop(): Promise<void> {
    try {
      // The first write waits for this turn of the event loop to end: handlers that finish together
      // (a claimed batch of quick jobs) go in one UPDATE, not one alone and then the rest behind it.
      await endOfTurn();
      while (this.pending.length) {
        const batch = this.pending.splice(0, 1000);
        await this.write(batch);
      }
    } finally {
      this.flushing = null;
    }
  }

  private async write(batch: PendingCompletion[]): Promise<void> {
    let done: Set<number>;
    try {
      // Built by concatenation, not map().join(): the arrays map() made changed their elements kind from one batch to
      // the next, and each change threw away this function's optimized code.
      let ids = `${batch[0].job.id}`;
      let tokens = batch[0].job.leaseToken;
      for (let i = 1; i < batch.length; i++) {
        ids += `,${batch[i].job.id}`;
        tokens += `,${batch[i].job.leaseToken}`;
      }
      const res = await writeResult(() => this.db.query(prepared(q.CompleteJobs, [ids, tokens])), {
        clock: this.clock,
        log: this.log,
        what: 'completion write',
        retryForMs: this.retryForMs,
        onError: this.onError,
      });
      done = new Set(res.rows.map((r) => r.id));
    } catch (err) {
      for (const b of batch) b.completionFailed(err);
      return;
    }
    for (const b of batch) b.completionWritten(done.has(b.job.id));
  }
}
