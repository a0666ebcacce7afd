import type { PoolClient } from 'pg';
import type { Db } from '../db.ts';
import type { JobContext } from '../handler.ts';
import type { ClaimedJob } from './claim.ts';

/** What of its run a handler's context reaches: the abort signal and effectOnce. */
export interface ContextRun {
  readonly signal: AbortSignal;
  effectOnce<T>(fn: (tx: PoolClient) => Promise<T>): Promise<{ applied: boolean; result?: T }>;
}

/** What a handler sees of its run. A class, so the getter and the method live on its prototype, not in a fresh object literal per job. */
export class RunContext implements JobContext {
  readonly #run: ContextRun;
  constructor(
    run: ContextRun,
    readonly job: ClaimedJob,
    readonly attempt: number,
    readonly workerId: string,
    readonly unsafeDb: Db,
  ) {
    this.#run = run;
  }

  get signal(): AbortSignal {
    return this.#run.signal;
  }

  effectOnce<T>(fn: (tx: PoolClient) => Promise<T>): Promise<{ applied: boolean; result?: T }> {
    return this.#run.effectOnce(fn);
  }
}
