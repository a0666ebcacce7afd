import type pg from 'pg';
import { DEAD_LETTER_CODES, type DeadLetterCode } from '../dead-letters.ts';
import type { Db } from '../db.ts';
import type { JobState } from '../job.ts';
import { validateInt, validateOneOf, validateQueueName } from '../validate.ts';
import { validateActor, writeAudit, type Actor } from './audit.ts';
import { JOB_VERBS, verbApplies, type JobVerb } from './decide.ts';
import { JobNotFoundError, JobStateError, UnknownQueueError } from './errors.ts';
import { controlQueries as q } from './queries.ts';

/** What a job verb did: the job, its queue and the state it was in. */
export interface JobActionResult {
  jobId: number;
  queue: string;
  from: JobState;
}

/**
 * One job verb in one transaction: lock the row, refuse a state the verb does
 * not apply to (nothing changes), apply it, write the audit row (unless the
 * change wrote its own: `apply` answers 'audited', as a redrive does).
 */
async function actOnJob(
  db: Db,
  verb: JobVerb,
  jobId: number,
  actor: Actor,
  apply: (tx: pg.PoolClient, row: { queue: string; state: JobState }, who: Actor) => Promise<void | 'audited'>,
): Promise<JobActionResult> {
  const id = validateInt(jobId, 'jobId', 1);
  const who = validateActor(actor);
  return db.transaction(async (tx) => {
    const row = (await tx.query(q.LockJob, [id])).rows[0] as { queue: string; state: JobState } | undefined;
    if (!row) throw new JobNotFoundError(verb, id);
    if (!verbApplies(verb, row.state)) throw new JobStateError(verb, id, row.state, JOB_VERBS[verb].from, JOB_VERBS[verb].hint);
    if ((await apply(tx, row, who)) !== 'audited') await writeAudit(tx, who, { verb, queue: row.queue, jobId: id, detail: { from: row.state } });
    return { jobId: id, queue: row.queue, from: row.state };
  });
}

/**
 * Cancels a pending, failed or claimed job: it ends in the terminal state
 * `cancelled`. A claimed job's handler sees `ctx.signal` abort with a
 * JobCancelledError at its next heartbeat, and whatever it reports after the
 * cancel is refused by the lease fence (an effectOnce transaction rolls back).
 * Refuses a job that is done, dead or already cancelled (JobStateError).
 */
export function cancelJob(db: Db, jobId: number, actor: Actor): Promise<JobActionResult> {
  return actOnJob(db, 'cancel', jobId, actor, async (tx) => {
    await tx.query(q.CancelJob, [jobId]);
  });
}

/**
 * Runs a failed or dead job now. A failed job keeps its attempt budget and
 * becomes due at once; a dead job is redriven through the one redrive
 * statement (fresh budget, its dead letter removed, its audit row, verb
 * `retry`, naming the dead letter's code and reason). Refuses any other state.
 */
export function retryJob(db: Db, jobId: number, actor: Actor): Promise<JobActionResult> {
  return actOnJob(db, 'retry', jobId, actor, async (tx, row, who) => {
    if (row.state === 'failed') {
      await tx.query(q.RetryFailedJob, [jobId]);
      return;
    }
    await redriveAudited(tx, { jobId }, 'retry', who);
    return 'audited';
  });
}

/**
 * Dead-letters a pending, failed or claimed job by hand: the live mitigation
 * for a poison the engine has not convicted yet. The dead letter's reason is
 * "dead-lettered by <by>: <reason>", so a later bulk redrive can select it.
 */
export function deadLetterJob(db: Db, jobId: number, actor: Actor): Promise<JobActionResult> {
  return actOnJob(db, 'dead-letter', jobId, actor, async (tx, _row, who) => {
    await tx.query(q.DeadLetterJob, [jobId, `dead-lettered by ${who.by}: ${who.reason}`]);
  });
}

export interface RedriveSelection {
  queue: string;
  /** Only dead letters of this code (DEAD_LETTER_CODES). Default: any. */
  code?: DeadLetterCode;
  /** Only dead letters whose reason contains this text (case-sensitive). Default: all of the queue. */
  reasonContains?: string;
  /** At most this many, oldest first. Default 10,000; at most 100,000 per call. */
  limit?: number;
  /** Redrive into a queue nothing else names (see UnknownQueueError). */
  allowNew?: boolean;
}

/**
 * Redrives a queue's dead letters in bulk, in one statement, each with a
 * fresh attempt budget and its own audit row (the oldest deaths first, up to
 * `limit`). Returns the ids moved back to pending, ascending. Refuses an
 * unknown queue; a known queue with nothing matching returns [].
 */
export async function redriveDeadLetters(db: Db, selection: RedriveSelection, actor: Actor): Promise<number[]> {
  const queue = validateQueueName(selection.queue);
  const who = validateActor(actor);
  const limit = selection.limit === undefined ? 10_000 : validateInt(selection.limit, 'limit', 1, 100_000);
  const code = selection.code === undefined ? null : validateOneOf(selection.code, 'code', DEAD_LETTER_CODES);
  const contains = selection.reasonContains === undefined || selection.reasonContains === '' ? null : selection.reasonContains;
  return db.transaction(async (tx) => {
    if (!selection.allowNew && !(await tx.query(q.KnownQueue, [queue])).rows[0].known) throw new UnknownQueueError('redrive', queue);
    return redriveAudited(tx, { queue, code, contains, limit }, 'redrive', who);
  });
}

/**
 * The one redrive (RedriveMany): one dead job, or a queue's selection; each
 * job moved writes its audit row, verb `verb`, in the same statement. Every
 * door that redrives comes through here.
 */
async function redriveAudited(
  tx: pg.PoolClient,
  selection: { jobId: number } | { queue: string; code: DeadLetterCode | null; contains: string | null; limit: number },
  verb: 'retry' | 'redrive',
  who: Actor,
): Promise<number[]> {
  const one = 'jobId' in selection;
  const res = await tx.query(q.RedriveMany, [
    one ? null : selection.queue,
    one ? null : selection.contains,
    one ? 1 : selection.limit,
    who.by,
    who.reason,
    one ? selection.jobId : null,
    verb,
    one ? null : selection.code,
  ]);
  return res.rows.map((r) => r.id as number);
}
