import type { Db } from '../../engine/db.ts';
import type { FinalState } from '../history.ts';
import { harnessQueries as q } from './queries.ts';

type Row = Record<string, any>;

function jobOf(r: Row): FinalState['jobs'][number] {
  return {
    id: r.id,
    queue: r.queue,
    state: r.state,
    attempts: r.attempts,
    priority: r.priority,
    idempotencyKey: r.idempotency_key,
    runAtMs: r.run_at_ms,
    ...(r.kind ? { kind: r.kind } : {}),
    ...(r.not_due_yet ? { notDueYet: true } : {}),
    maxAttempts: r.max_attempts,
    crashCount: r.crash_count,
    errorCount: r.error_count,
    ...(r.producer_key ? { producerKey: r.producer_key } : {}),
    ...(r.op !== null && r.op !== undefined ? { op: r.op } : {}),
  };
}

/**
 * The database's final word on the run: every job's state (archived ones
 * included, marked so), the dead letters, how often each effect was applied,
 * the dedup keys left, and the schedules' policies. A pending row counts as not due yet if it fell due
 * after `drainedAt` (the database's time when the drain found nothing left;
 * default now()).
 */
export async function readFinalState(db: Db, drainedAt?: Date): Promise<FinalState> {
  const [jobs, archived, dead, effects, effectRows, keys, schedules, audit] = await Promise.all([
    db.query(q.FinalJobs, [drainedAt ?? null]),
    db.query(q.FinalArchivedJobs),
    db.query(q.FinalDeadLetters),
    db.query(q.FinalEffects),
    db.query(q.FinalEffectRows),
    db.query(q.FinalEffectKeys),
    db.query(q.FinalSchedules),
    db.query(q.FinalAudit),
  ]);
  return {
    jobs: [
      ...jobs.rows.map(jobOf),
      ...archived.rows.map((r) => ({ ...jobOf(r), archived: true, finishedAtMs: r.finished_at_ms, archivedAtMs: r.archived_at_ms })),
    ],
    deadLetters: dead.rows.map((r) => ({ jobId: r.job_id, code: r.code, reason: r.reason, attempts: r.attempts, errorCount: r.error_count })),
    effects: Object.fromEntries(effects.rows.map((r) => [r.key, r.n])),
    effectRows: effectRows.rows.map((r) => ({ key: r.key, jobId: Number(r.job_id), workerId: r.worker_id, appliedAtMs: r.applied_at_ms })),
    effectKeys: keys.rows.filter((r) => r.key !== null).map((r) => r.key),
    dbNowMs: keys.rows[0]?.db_now_ms,
    schedules: schedules.rows.map((r) => ({ id: r.id, cron: r.cron, timezone: r.timezone, dstPolicy: r.dst_policy, catchUp: r.catch_up })),
    audit: audit.rows.map((r) => ({ verb: r.verb, queue: r.queue, jobId: r.job_id === null ? null : Number(r.job_id), actor: r.actor, reason: r.reason })),
  };
}
