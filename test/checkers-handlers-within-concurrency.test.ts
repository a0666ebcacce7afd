// handlers-within-concurrency on small hand-written histories, with violating ones.
import { describe, expect, it } from 'vitest';
import { checkHandlersWithinConcurrency, handlersWithinConcurrency } from '../harness/checkers/handlers-within-concurrency.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState } from './support/history-builder.ts';

const final = finalState([]);
const bounds = handlersWithinConcurrency.defaults;
const check = (h: HistoryEvent[]) => checkHandlersWithinConcurrency(h, final, bounds);

const node = 'worker-0';
const procStarted = (t: number, pid = 1): HistoryEvent => ({ t, node, type: 'process:started', pid, role: 'worker' });
const killed = (t: number, pid = 1): HistoryEvent => ({ t, node, type: 'process:exited', pid, role: 'worker', code: null, signal: 'SIGKILL', expected: false });
const settings = (t: number, concurrency: number, workerId = `${node}.1`): HistoryEvent => ({ t, node, type: 'worker:settings', workerId, concurrency, maxCrashes: 2, agingMs: 5_000, rescue: true, queues: {} });
const started = (t: number, jobId: number, workerId = `${node}.1`): HistoryEvent => ({ t, nodeTime: 1_000_000 + t, node, type: 'job:started', jobId, queue: 'q', attempt: 1, workerId });
/** Written `lagMs` after its handler returned (a batched completion). */
const completed = (t: number, jobId: number, durationMs: number, workerId = `${node}.1`): HistoryEvent => ({
  t,
  nodeTime: 1_000_000 + t,
  node,
  type: 'job:completed',
  jobId,
  queue: 'q',
  attempt: 1,
  workerId,
  durationMs,
  leaseToken: 'x',
});

describe('handlers-within-concurrency', () => {
  it('passes a worker that runs exactly its concurrency, the next handler starting in the millisecond a slot freed', () => {
    // Two slots: 1 and 2 run 3 s; 3 starts when 1 returned (its completion written 8 ms later, after 3 started).
    const r = check([procStarted(0), started(10, 1), started(12, 2), settings(20, 2), started(3_010, 3), completed(3_018, 1, 3_000), completed(3_020, 2, 3_000), completed(6_020, 3, 3_000)]);
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 3, what: 'handler starts, each counting the handlers its process ran then' });
    expect(r.figure).toContain('worker-0.1 2/2');
  });

  it('does not count an end 1 ms past the next start (the start stamped a millisecond late) as an overlap', () => {
    const r = check([procStarted(0), settings(1, 2), started(10, 1), started(11, 2), started(3_010, 3), completed(3_030, 1, 3_001), completed(3_031, 2, 3_000)]);
    expect(r.pass).toBe(true);
  });

  it('fails (negative control) a worker that runs one handler more than its concurrency', () => {
    const r = check([procStarted(0), settings(1, 2), started(10, 1), started(11, 2), started(12, 3), completed(3_030, 1, 3_000), completed(3_031, 2, 3_000), completed(3_032, 3, 3_000)]);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ workerId: 'worker-0.1', node, concurrency: 2, running: 3, jobId: 3, attempt: 1, startedAt: 1_000_012, alongside: [1, 2] }]);
  });

  it('counts a handler whose end was never reported as running until its process was killed, and a restarted process from nothing', () => {
    const history = [procStarted(0), settings(1, 1), started(10, 1), started(500, 2), killed(900), procStarted(1_000, 2), settings(1_001, 1, `${node}.2`), started(1_010, 3), completed(1_100, 3, 50, `${node}.2`)];
    const r = check(history);
    expect(r.pass).toBe(false); // job 2 started beside job 1, which ran until the kill
    expect(r.figure).toContain('worker-0.2 1/1');
    // Without job 2, the killed process's handler does not reach into the next process's life.
    expect(check(history.filter((e) => !(e.type === 'job:started' && e.jobId === 2))).pass).toBe(true);
  });

  it('is unknown when nothing was judged, or no worker ever ran at its concurrency', () => {
    expect(check([]).pass).toBe('unknown');
    expect(check([procStarted(0), started(10, 1), completed(50, 1, 30)]).pass).toBe('unknown'); // no concurrency reported
    const below = check([procStarted(0), settings(1, 2), started(10, 1), completed(50, 1, 30), started(60, 2), completed(90, 2, 20)]);
    expect(below.pass).toBe('unknown');
    expect(below.figure).toContain('never approached');
  });
});
