import type { PoolClient } from 'pg';
import type { Db } from '../db.ts';
import { EffectBusyError, LeaseLostError } from '../errors.ts';
import type { ClaimedJob } from './claim.ts';
import { workerQueries as q } from './queries.ts';

/** What one effectOnce call did. */
export interface EffectOutcome<T> {
  /** The effect ran (false: the key was already recorded, a replay). */
  applied: boolean;
  result?: T;
  /** The job's completion committed with the effect; false leaves it to the ordinary completion. */
  completedJob: boolean;
}

/**
 * The effect, the dedup record of the job's key and the job's completion in
 * one transaction, fenced on the lease token: a replay finds the key and does
 * nothing, and a worker that lost its lease rolls all three back. When another
 * holder's effect for the key is still open, throws EffectBusyError at once
 * rather than wait on it.
 */
export async function effectInTransaction<T>(
  db: Db,
  job: ClaimedJob,
  key: string,
  fn: (tx: PoolClient) => Promise<T>,
): Promise<EffectOutcome<T>> {
  return db.transaction(async (tx) => {
    const recorded = (await tx.query(q.RecordEffectKey, [key, job.id])).rows[0];
    if (recorded.busy) throw new EffectBusyError(job.id);
    const applied: boolean = recorded.applied;
    const result = applied ? await fn(tx) : undefined;
    const completed = await tx.query(q.CompleteJobInTx, [job.id, job.leaseToken]);
    if (completed.rowCount === 0) throw new LeaseLostError(job.id); // rolls back the effect and the key
    return { applied, result, completedJob: true };
  });
}
