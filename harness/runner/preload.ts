import type { Clock } from '../../engine/clock.ts';
import type { Db } from '../../engine/db.ts';
import { enqueueMany, type BulkJob } from '../../engine/enqueue.ts';
import type { Rng } from '../../engine/rng.ts';
import type { Scenario } from '../scenario.ts';
import { harnessQueries as q } from './queries.ts';
import type { HistoryRecorder } from './recorder.ts';

/** Rows per INSERT: one statement of parallel arrays each. */
const CHUNK = 2_000;
/** How long the retries' first attempts may take to fail before the run goes on without them. */
const FIRST_FAILURES_WAIT_MS = 30_000;

/**
 * Puts the scenario's preloaded work in place through the engine's own
 * enqueue, before the load starts: delayed jobs at seeded instants ahead, and
 * jobs whose first attempt fails so that they wait in their backoff as
 * retries. Returns once every retry has failed once (or the wait ran out).
 */
export async function preloadWork(db: Db, s: Scenario, rng: Rng, recorder: HistoryRecorder, clock: Clock, signal: AbortSignal): Promise<void> {
  if (s.preload.length === 0) return;
  const dbNowMs = ((await db.query(q.DbNow)).rows[0].now as Date).getTime();
  const retryIds = new Set<number>();
  for (const [i, p] of s.preload.entries()) {
    const r = rng.fork(`preload[${i}]`);
    const jobs: BulkJob[] = Array.from({ length: p.count }, (_, n) => ({
      queue: p.queue,
      payload: p.origin === 'retry' ? { kind: 'flaky', params: { durationMs: 5, failAttempts: 1 } } : { kind: 'normal', params: { durationMs: 5 } },
      options: {
        idempotencyKey: `preload:${i}:${n}`,
        maxAttempts: s.engine.maxAttempts,
        ...(p.origin === 'delayed' ? { runAt: new Date(dbNowMs + Math.round((p.dueInS.fromS + r.next() * (p.dueInS.toS - p.dueInS.fromS)) * 1000)) } : {}),
      },
    }));
    const ids: number[] = [];
    const runAts: number[] = [];
    for (let k = 0; k < jobs.length; k += CHUNK) {
      for (const j of await enqueueMany(db, jobs.slice(k, k + CHUNK))) {
        ids.push(j.id);
        runAts.push(j.runAt.getTime());
      }
    }
    if (p.origin === 'retry') for (const id of ids) retryIds.add(id);
    recorder.record({
      type: 'preload:enqueued',
      node: 'harness',
      origin: p.origin,
      queue: p.queue,
      jobIds: ids,
      runAtFrom: runAts.length ? Math.min(...runAts) : null,
      runAtTo: runAts.length ? Math.max(...runAts) : null,
    });
  }
  if (retryIds.size > 0) await firstFailures(recorder, clock, retryIds, signal);
}

/** Resolves once every job in `ids` has a recorded failure, or after FIRST_FAILURES_WAIT_MS. */
async function firstFailures(recorder: HistoryRecorder, clock: Clock, ids: Set<number>, signal: AbortSignal): Promise<void> {
  const left = new Set(ids);
  for (const e of recorder.events) if (e.type === 'job:failed') left.delete(e.jobId);
  if (left.size === 0) return;
  const done = new AbortController();
  const off = recorder.onEvent((e) => {
    if (e.type === 'job:failed' && left.delete(e.jobId) && left.size === 0) done.abort();
  });
  await clock.sleep(FIRST_FAILURES_WAIT_MS, AbortSignal.any([done.signal, signal])).catch(() => {});
  off();
}
