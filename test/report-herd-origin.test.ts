import { describe, expect, it } from 'vitest';
import type { HistoryEvent } from '../harness/history.ts';
import { analyze, type ReportInput } from '../reports/render/index.ts';
import { finalState, h, job, REPORT_BASE, reportInput } from './support/history-builder.ts';

/**
 * Where the report says a thundering herd came from: only what the history
 * shows. The same size of herd, once as the harness's bulk insert and once as
 * the work a database clock step skipped over, must each be described as what
 * it was (and not as the other, nor as "materialized by a scheduler").
 */
const BASE = REPORT_BASE;
const HOUR = 3_600_000;

const input = (history: HistoryEvent[], final = finalState([])): ReportInput =>
  reportInput([...history].sort((a, b) => a.t - b.t), { final, thresholds: { oldestAgeSloMs: 2_000, deadLetterDepth: 1 } });

/** One offered job a second (not in second 10), on the database clock `shift` ms ahead from 10 s on. */
function background(shiftFrom10s: number): HistoryEvent[] {
  return Array.from({ length: 20 }, (_, s) => s)
    .filter((s) => s !== 10)
    .flatMap((s) => {
      const t = s * 1000 + 300;
      const db = BASE + t + (t >= 10_000 ? shiftFrom10s : 0);
      return [h.invoke(t, s), h.ok(t, s, 100 + s, 'default', { runAt: db }), h.claim(t + 10, 100 + s, 'w-1', 1, { runAt: db, dbTime: db + 10 })];
    });
}

const rootCause = (i: ReportInput) => analyze(i).rootCause.findings.join('\n');

describe('the herd is attributed to what the history recorded', () => {
  it('a bulk insert by the thundering-herd fault is described as the harness inserting it', () => {
    const runAt = BASE + 10_000;
    const herd = Array.from({ length: 100 }, (_, i) => h.claim(10_100 + i, 1000 + i, 'w-1', 1, { runAt, dbTime: runAt + 100 + i }));
    const text = rootCause(
      input([...background(0), h.fault(10_000, 'thundering-herd', { seq: 0, queue: 'default', count: 100, runAt: new Date(runAt).toISOString(), jobIds: [1000, 1001] }), ...herd]),
    );
    expect(text).toMatch(/A thundering herd: 100 jobs became due in the one second from t=\+10\.0 s, against a median of 1 per second \(100 jobs of the bulk insert\)/);
    expect(text).toMatch(/one bulk insert by the harness's `thundering-herd` fault at t=\+10\.0 s/);
    expect(text).not.toMatch(/clock stepped|materialized by a scheduler|delayed|cron occurrences/);
  });

  it('a database clock step is described as making due the delayed work, retries and cron rows it skipped over', () => {
    const before = BASE + 10_000;
    const after = before + HOUR;
    const history: HistoryEvent[] = [
      ...background(HOUR),
      { t: 0, node: 'harness', type: 'preload:enqueued', origin: 'delayed', queue: 'default', jobIds: Array.from({ length: 60 }, (_, i) => 2000 + i), runAtFrom: BASE + 60_000, runAtTo: BASE + 650_000 },
      { t: 0, node: 'harness', type: 'preload:enqueued', origin: 'retry', queue: 'default', jobIds: Array.from({ length: 20 }, (_, i) => 3000 + i), runAtFrom: BASE, runAtTo: BASE },
      // The retries' first attempts fail at once and back off into the minute ahead.
      ...Array.from({ length: 20 }, (_, i) => [
        h.claim(50, 3000 + i, 'w-1', 1, { runAt: BASE, dbTime: BASE + 50 }),
        h.failed(60, 3000 + i, 'w-1', 1, { retryAt: BASE + 20_000 + i * 1000, dbTime: BASE + 60 }),
      ]).flat(),
      h.fault(10_000, 'db-clock-jump', { seq: 1, jumpMs: HOUR, dbBeforeMs: before, dbAfterMs: after, dueAtOnce: { delayed: 60, retry: 20, cron: 10 }, nodesStepped: ['scheduler-0'] }),
      { t: 10_400, node: 'scheduler-0', nodeTime: BASE + 10_400 + HOUR, type: 'cron:materialized', scheduleId: 'rollup', occurrences: 20, inserted: 20, nodeId: 'scheduler-0' },
      ...Array.from({ length: 60 }, (_, i) => h.claim(10_100 + i, 2000 + i, 'w-1', 1, { runAt: BASE + 60_000 + i * 10_000, dbTime: after + 100 + i })),
      ...Array.from({ length: 20 }, (_, i) => h.claim(10_200 + i, 3000 + i, 'w-1', 2, { runAt: BASE + 20_000 + i * 1000, dbTime: after + 200 + i })),
      ...Array.from({ length: 30 }, (_, i) => h.claim(10_500 + i, 4000 + i, 'w-1', 1, { runAt: BASE + 60_000 * (i + 1), dbTime: after + 500 + i })),
    ];
    const cronJobs = Array.from({ length: 30 }, (_, i) => job(4000 + i, 'done', { idempotencyKey: `cron:rollup:${new Date(BASE + 60_000 * (i + 1)).toISOString()}` }));
    const text = rootCause(input(history, finalState(cronJobs)));
    expect(text).toMatch(
      /A thundering herd: 110 jobs became due in the one second from t=\+10\.0 s, against a median of 1 per second \(60 delayed jobs, 20 retries waiting out their backoff and 30 cron occurrences\)/,
    );
    expect(text).toMatch(/because the database clock stepped \+60 min at t=\+10\.0 s \(fault `db-clock-jump`\)/);
    expect(text).toMatch(/the database counted 60 delayed jobs, 20 retries and 10 cron rows written ahead inside it, so 20 of the herd's cron occurrences were written after the step \(catch-up\)/);
    expect(text).toMatch(/Node scheduler-0's clock jumped \+60 min at t=\+10\.0 s together with the database clock/);
    expect(text).not.toMatch(/bulk insert|materialized by a scheduler/);
  });

  it('waits are read from when a job became due: a job the step skipped over waited from the step, not for an hour', () => {
    const before = BASE + 10_000;
    const history: HistoryEvent[] = [
      ...background(HOUR),
      h.fault(10_000, 'db-clock-jump', { seq: 1, jumpMs: HOUR, dbBeforeMs: before, dbAfterMs: before + HOUR }),
      { t: 10_100, node: 'w-1', type: 'job:claimed', jobId: 9, queue: 'default', priority: 0, attempt: 1, workerId: 'w-1', runAt: BASE + 60_000, dbTime: before + HOUR + 1_000 },
      { t: 10_100, node: 'w-1', type: 'job:started', jobId: 9, queue: 'default', attempt: 1, workerId: 'w-1' },
    ];
    const a = analyze(input(history));
    expect(a.impact.latency.maxMs).toBeLessThanOrEqual(1_100);
    expect(a.idx.base).toBe(BASE);
  });
});
