import type { Clock } from '../clock.ts';
import { prepared, type Db } from '../db.ts';
import type { Logger } from '../log.ts';
import { workerQueries as q } from './queries.ts';
import { RESULT_WRITE_RETRY_MS, writeResult } from './result-write.ts';

interface Pending {
  id: number;
  token: string;
  resolve: (completed: boolean) => void;
  reject: (err: unknown) => void;
}

/**
 * Batches job completions: while one UPDATE is in flight, the completions
 * that arrive meanwhile wait and go together in the next one. Under load
 * that turns N round trips into a few; when idle a completion goes at the
 * end of the event loop's turn, with whatever else finished in it.
 * Each completion is fenced on its lease token; `complete()` resolves false
 * when the fence refused it (the lease was lost).
 */
export class CompletionBatcher {
  private pending: Pending[] = [];
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** How long to keep retrying a completion through a dropped connection before giving up (the lease will expire and the job rerun). */
    private readonly retryForMs = RESULT_WRITE_RETRY_MS,
  ) {}

  complete(id: number, token: string): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.pending.push({ id, token, resolve, reject });
      if (!this.flushing) this.flushing = this.flushLoop();
    });
  }

  /** Resolves when everything handed in so far has been written (or given up on). */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async flushLoop(): Promise<void> {
    try {
      // The first write waits for this turn of the event loop to end: handlers that finish together
      // (a claimed batch of quick jobs) go in one UPDATE, not one alone and then the rest behind it.
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (this.pending.length) {
        const batch = this.pending.splice(0, 1000);
        await this.write(batch);
      }
    } finally {
      this.flushing = null;
    }
  }

  private async write(batch: Pending[]): Promise<void> {
    try {
      const res = await writeResult(() => this.db.query(prepared(q.CompleteJobs, [batch.map((b) => b.id).join(','), batch.map((b) => b.token).join(',')])), {
        clock: this.clock,
        log: this.log,
        what: 'completion write',
        retryForMs: this.retryForMs,
      });
      const done = new Set(res.rows.map((r) => r.id));
      for (const b of batch) b.resolve(done.has(b.id));
    } catch (err) {
      for (const b of batch) b.reject(err);
    }
  }
}
