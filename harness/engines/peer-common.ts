import { createRequire } from 'node:module';
import type { Db } from '../../engine/db.ts';
import { loadQueries } from '../../engine/sql.ts';
import type { FinalState } from '../history.ts';
import { harnessQueries } from '../runner/queries.ts';

export const peerQueries = loadQueries(new URL('./peers.sql', import.meta.url), [
  'CreatePeerTables',
  'RecordCompletion',
  'CompletedJobs',
  'GraphileAddJob',
  'GraphileAddJobs',
  'GraphileJobIdsFrom',
  'GraphileJobs',
  'GraphileUnfinished',
  'GraphileSample',
  'PgBossJobs',
  'PgBossDeadLetters',
  'PgBossUnfinished',
  'PgBossSample',
  'PgBossRunAt',
  'PgBossQueues',
]);

/**
 * A peer's job ids are its own (a bigint, a UUID); the history's are numbers
 * the harness gives: a generated job's op (key `op:<n>`), a fault's job its
 * action and index (key `fault:<seq>:<i>`). The key travels in the payload
 * and, where the engine has one, as its job key, so both ends agree.
 */
export function historyIdOf(key: string): number {
  const op = /^op:(\d+)$/.exec(key);
  if (op) return Number(op[1]);
  const fault = /^fault:(\d+):(\d+)$/.exec(key);
  if (fault) return 1_000_000_000 + Number(fault[1]) * 100_000 + Number(fault[2]);
  throw new Error(`a peer job's key must be op:<n> or fault:<seq>:<i>, got ${JSON.stringify(key)}`);
}

/** A peer's job row as the adapters read it, in the harness's words. */
export interface PeerRow {
  key: string;
  queue: string;
  priority: number;
  /** The harness's states: pending, failed (waiting to retry), claimed, done, dead. */
  state: 'pending' | 'failed' | 'claimed' | 'done' | 'dead';
  attempts: number;
  maxAttempts: number;
  runAtMs: number;
  notDueYet: boolean;
}

/**
 * The final state of a peer's run: its rows, plus the jobs whose row is gone
 * and whose handler returned successfully (done: graphile-worker deletes a
 * finished job). A row gone without a successful run is absent, which
 * no-job-lost counts as missing.
 */
export async function peerFinalState(db: Db, rows: PeerRow[], deadLetterKeys: string[]): Promise<FinalState> {
  const [completed, effects, effectRows, now] = await Promise.all([
    db.query(peerQueries.CompletedJobs),
    db.query(harnessQueries.FinalEffects),
    db.query(harnessQueries.FinalEffectRows),
    db.query(harnessQueries.DbNow),
  ]);
  const present = new Set<number>();
  const jobs: FinalState['jobs'] = rows.map((r) => {
    const id = historyIdOf(r.key);
    present.add(id);
    return {
      id,
      queue: r.queue,
      state: r.state,
      attempts: r.attempts,
      priority: r.priority,
      idempotencyKey: r.key,
      runAtMs: r.runAtMs,
      maxAttempts: r.maxAttempts,
      ...(r.notDueYet && r.state === 'pending' ? { notDueYet: true } : {}),
    };
  });
  for (const { job_id } of completed.rows) {
    const id = Number(job_id);
    if (present.has(id)) continue;
    const key = id >= 1_000_000_000 ? `fault:${Math.floor((id - 1_000_000_000) / 100_000)}:${(id - 1_000_000_000) % 100_000}` : `op:${id}`;
    jobs.push({ id, queue: '', state: 'done', attempts: 0, priority: 0, idempotencyKey: key });
  }
  return {
    jobs,
    deadLetters: deadLetterKeys.map((key) => ({ jobId: historyIdOf(key), reason: 'attempts exhausted' })),
    effects: Object.fromEntries(effects.rows.map((r) => [r.key, r.n])),
    effectRows: effectRows.rows.map((r) => ({ key: r.key, jobId: Number(r.job_id), workerId: r.worker_id, appliedAtMs: r.applied_at_ms })),
    dbNowMs: (now.rows[0].now as Date).getTime(),
  };
}

/**
 * Loads a peer library the user installs beside stampede-queue (an optional
 * dependency): missing, it says what to install instead of a stack trace.
 * `alias` names an npm alias (a known-bug control's older release).
 */
export async function loadPeer<T>(pkg: string, exact: string, alias = process.env.STAMPEDE_PEER_PACKAGE): Promise<T> {
  const name = alias || pkg;
  try {
    // Resolved from the working directory first: the user's project, where they installed it.
    const fromCwd = createRequire(`${process.cwd()}/`);
    let path: string;
    try {
      path = fromCwd.resolve(name);
    } catch {
      path = createRequire(import.meta.url).resolve(name);
    }
    return (await import(path)) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND' && !/Cannot find (module|package)/.test((err as Error).message)) throw err;
    throw new PeerMissingError(`--engine ${pkg} needs the package ${name}, which is not installed; install it beside stampede-queue: npm install ${alias ? `${name}@npm:${pkg}@<version>` : `${pkg}@${exact}`}`);
  }
}

/** A peer engine's package is not installed: a setup error the CLI reports with what to install (exit 2). */
export class PeerMissingError extends Error {}
