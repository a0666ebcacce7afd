import type { Queryable } from '../../engine/db.ts';
import { loadQueries } from '../../engine/sql.ts';

const q = loadQueries(new URL('./db-clock.sql', import.meta.url), ['InstallDbClock', 'SetSearchPath', 'StepDbClock', 'MsToMinute', 'DbNow'] as const);

/**
 * The simulated database clock, a harness-only seam (docs/time.md): after
 * install, every session opened on the database reads `now()` as the real
 * clock plus an offset that `stepDbClock` moves, for all of them at once.
 * The engine's SQL is unchanged; production never installs it.
 */
export async function installDbClock(db: Queryable): Promise<void> {
  await db.query(q.InstallDbClock);
  await db.query(q.SetSearchPath);
}

/** What one step of the database clock made due, by origin (claimable jobs whose run_at fell inside the step). */
export interface DbClockStep {
  dbBefore: Date;
  dbAfter: Date;
  offsetMs: number;
  /** Delayed jobs: pending, first run scheduled inside the step. */
  delayed: number;
  /** Retries waiting out their backoff (state failed). */
  retry: number;
  /** Cron occurrences already written ahead (idempotency key `cron:...`). */
  cron: number;
}

/** Steps the simulated database clock by `deltaMs` (forward: positive). */
export async function stepDbClock(db: Queryable, deltaMs: number): Promise<DbClockStep> {
  const r = (await db.query(q.StepDbClock, [deltaMs])).rows[0];
  return { dbBefore: r.db_before, dbAfter: r.db_after, offsetMs: r.offset_ms, delayed: r.delayed, retry: r.retry, cron: r.cron };
}

/** How far to step the database clock forward so that a minute of it begins `inMs` from now: in [0, 60,000). */
export async function msToDbMinute(db: Queryable, inMs: number): Promise<number> {
  return Number((await db.query(q.MsToMinute, [inMs])).rows[0].step_ms);
}

/** The database's now() in epoch ms (the simulated clock where installed). */
export async function dbNowMs(db: Queryable): Promise<number> {
  return ((await db.query(q.DbNow)).rows[0].now as Date).getTime();
}
