// What a worker tells its operator: a line per failure, dead letter, lost lease and rescue, folded in a storm,
// and its totals when it stops. The folding rule on an injected clock; the lines from a real worker on Postgres,
// and from the `stampede worker` command as a user starts it.
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../engine/clock.ts';
import { enqueue } from '../engine/enqueue.ts';
import { Events } from '../engine/events.ts';
import { createLogger } from '../engine/log.ts';
import { SeededRng } from '../engine/rng.ts';
import { compiledEntry } from '../engine/supervisor/compiled-entry.ts';
import { Worker } from '../engine/worker/worker.ts';
import { errorLine, JobLineFolder, WorkerLog, type JobLine } from '../engine/worker/worker-log.ts';
import { freshDatabase } from './support/db.ts';
import { jobRow } from './support/jobs.ts';
import { until } from './support/wait.ts';

function folder(maxCauses = 50) {
  const clock = new ManualClock(0);
  const lines: string[] = [];
  const f = new JobLineFolder(clock, (level, text) => lines.push(`${level} ${text}`), 10_000, maxCauses);
  return { clock, lines, f };
}

const failure = (jobId: number, cause = 'Error: downstream said 503', queue = 'mail'): JobLine => ({
  level: 'warn',
  jobId,
  verb: 'failed',
  queue,
  cause,
  detail: 'attempt 1/5',
});

describe('a storm of the same failure folds', () => {
  it('10,000 failures of one cause on one queue: the first line, then one summary with the count, the span and the last job', () => {
    const { clock, lines, f } = folder();
    for (let id = 1; id <= 10_000; id++) {
      f.add(failure(id));
      clock.advance(0.5);
    }
    expect(lines).toEqual(['warn job 1 failed on mail: Error: downstream said 503 (attempt 1/5)']);
    clock.advance(10_000); // the window ends: its timer prints the count
    expect(lines).toEqual([
      'warn job 1 failed on mail: Error: downstream said 503 (attempt 1/5)',
      'warn failed on mail: Error: downstream said 503 (9,999 more in 5.0 s; the last: job 10000, attempt 1/5)',
    ]);
  });

  it('while the storm goes on, one summary per window; after a quiet window the next one prints in full', () => {
    const { clock, lines, f } = folder();
    for (let id = 1; id <= 30; id++) {
      f.add(failure(id));
      clock.advance(1_000);
    }
    clock.advance(25_000);
    f.add(failure(31));
    expect(lines).toEqual([
      'warn job 1 failed on mail: Error: downstream said 503 (attempt 1/5)',
      'warn failed on mail: Error: downstream said 503 (9 more in 9.0 s; the last: job 10, attempt 1/5)',
      'warn failed on mail: Error: downstream said 503 (10 more in 9.0 s; the last: job 20, attempt 1/5)',
      'warn failed on mail: Error: downstream said 503 (10 more in 9.0 s; the last: job 30, attempt 1/5)',
      'warn job 31 failed on mail: Error: downstream said 503 (attempt 1/5)',
    ]);
  });

  it('negative control: another error, another queue or another level prints; numbers alone do not make a new cause', () => {
    const { lines, f } = folder();
    f.add(failure(1, 'Error: order 17 not found'));
    f.add(failure(2, 'Error: order 18 not found'));
    f.add(failure(3, 'TypeError: order 17 not found'));
    f.add(failure(4, 'Error: order 17 not found', 'sms'));
    f.add({ ...failure(5, 'Error: order 17 not found'), level: 'error' });
    f.flush();
    expect(lines).toEqual([
      'warn job 1 failed on mail: Error: order 17 not found (attempt 1/5)',
      'warn job 3 failed on mail: TypeError: order 17 not found (attempt 1/5)',
      'warn job 4 failed on sms: Error: order 17 not found (attempt 1/5)',
      'error job 5 failed on mail: Error: order 17 not found (attempt 1/5)',
      'warn failed on mail: Error: order 17 not found (1 more in 0.0 s; the last: job 2, attempt 1/5)',
    ]);
  });

  it('beyond the cap on open causes, new ones fold into one "other causes" line per queue, naming the last', () => {
    const { lines, f } = folder(2);
    f.add(failure(1, 'Error: a'));
    f.add(failure(2, 'Error: b'));
    for (let id = 3; id <= 100; id++) f.add(failure(id, `Error: ${String.fromCharCode(99 + (id % 20))}x`));
    f.flush();
    expect(lines).toEqual([
      'warn job 1 failed on mail: Error: a (attempt 1/5)',
      'warn job 2 failed on mail: Error: b (attempt 1/5)',
      'warn job 3 failed on mail: Error: fx (attempt 1/5)',
      'warn failed on mail, other causes (97 more in 0.0 s; the last: job 100, Error: cx, attempt 1/5)',
    ]);
  });

  it("an error's first line only, its password redacted before the cut, at most 200 characters", () => {
    expect(errorLine('Error: connect to postgres://app:hunter2@db:5432/x refused\n    at connect (net.js:1:1)')).toBe(
      'Error: connect to postgres://app:***@db:5432/x refused',
    );
    const long = errorLine(`Error: ${'x'.repeat(190)} postgres://app:hunter2@db/x`);
    expect(long).toHaveLength(200);
    expect(long).not.toContain('hunter2');
  });
});

describe('the lines from engine events', () => {
  function watched() {
    const clock = new ManualClock(Date.parse('2025-06-01T12:00:00Z'));
    const events = new Events();
    const lines: string[] = [];
    const log = createLogger('worker', 'info', { clock, sink: (l) => lines.push(l) }).child('w1');
    const report = new WorkerLog({ events, log, clock, workerId: 'w1', maxCrashes: 2 });
    report.start();
    return { clock, events, lines, report };
  }
  const at = Date.parse('2025-06-01T12:00:00Z');

  it('a failure, the last one, its dead letter, a conviction, a lost lease, a rescue, then the totals', () => {
    const { clock, events, lines, report } = watched();
    const base = { queue: 'mail', workerId: 'w1', durationMs: 5, dbFailedAt: at };
    events.emit('job:failed', { ...base, jobId: 7, attempt: 2, maxAttempts: 5, error: 'TypeError: bad field\n  at x', retryAt: at + 3_200 });
    events.emit('job:failed', { ...base, jobId: 8, attempt: 5, maxAttempts: 5, error: 'Error: gone', retryAt: at + 9_000 });
    events.emit('job:dead', { jobId: 8, queue: 'mail', attempt: 5, code: 'attempts_exhausted', reason: 'attempts exhausted: Error: gone' });
    events.emit('lease:rescued', { jobId: 9, queue: 'mail', attempts: 1, crashCount: 1, dead: false, crashed: true, owner: 'w0' });
    events.emit('lease:rescued', { jobId: 9, queue: 'mail', attempts: 2, crashCount: 2, dead: true, crashed: true, owner: 'w2' });
    events.emit('job:dead', { jobId: 9, queue: 'mail', attempt: 2, code: 'crash_loop', reason: 'crashed its worker 2 times' });
    events.emit('lease:lost', { jobId: 10, queue: 'mail', attempt: 1, workerId: 'w1', phase: 'heartbeat', leaseToken: 't' });
    events.emit('job:failed', { ...base, workerId: 'another worker sharing the Events', jobId: 11, attempt: 1, maxAttempts: 5, error: 'Error: not ours', retryAt: at });
    report.completed = 1234;
    clock.advance(12_345);
    report.stop();
    expect(lines).toEqual([
      'WARN worker:w1: job 7 failed on mail: TypeError: bad field (attempt 2/5; retry at 2025-06-01T12:00:03.200Z, in 3.2 s)',
      'WARN worker:w1: job 8 failed on mail: Error: gone (attempt 5/5; no attempt left)',
      'ERROR worker:w1: job 8 dead-lettered on mail: attempt budget exhausted; last error Error: gone (after 5 attempts)',
      'WARN worker:w1: job 9 was taken back on mail: its worker w0 died holding it; it runs again alone (crash 1/2, attempt 1)',
      'ERROR worker:w1: job 9 dead-lettered on mail: crash loop convicted: crashed its worker 2 times (after 2 attempts)',
      "WARN worker:w1: job 10 lost its lease on mail: its heartbeat found it gone; the handler is aborted, this attempt's outcome is not recorded (attempt 1)",
      'INFO worker:w1: worker stopped: 1,234 completed, 2 failed, 2 dead, 0 handed back, 1 lease lost, ran 12.3 s',
    ]);
  });
});

const { db, url } = await freshDatabase();

describe('a worker on Postgres', () => {
  const workers: Worker[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop(0)));
  });

  it('logs each failed attempt with the retry time, the dead letter, and its totals when it stops', async () => {
    const lines: string[] = [];
    const log = createLogger('worker', 'info', { sink: (l) => lines.push(l) });
    const job = await enqueue(db, 'declines', {}, { maxAttempts: 2 });
    const ok = await enqueue(db, 'fine', {});
    const w = new Worker({
      db,
      log,
      workerId: 'w-log',
      rng: new SeededRng(1),
      pollMs: 50,
      backoffBaseMs: 10,
      backoffCapMs: 50,
      handlers: { declines: () => Promise.reject(new RangeError('card declined')), fine: () => {} },
    });
    workers.push(w);
    w.start();
    await until('job dead and the other done', async () => (await jobRow(db, job.id)).state === 'dead' && (await jobRow(db, ok.id)).state === 'done');
    await until('the dead-letter line', () => lines.some((l) => l.includes('dead-lettered')));
    await w.stop();
    const prefix = `WARN worker:w-log: job ${job.id} failed on declines: RangeError: card declined`;
    expect(lines[0]).toMatch(new RegExp(`^${prefix} \\(attempt 1/2; retry at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z, in \\d+\\.\\d s\\)$`));
    // Its second attempt failed within the fold window of the first: counted, and the count printed as it stops.
    expect(lines.slice(1)).toEqual([
      `ERROR worker:w-log: job ${job.id} dead-lettered on declines: attempt budget exhausted; last error RangeError: card declined (after 2 attempts)`,
      expect.stringMatching(new RegExp(`^WARN worker:w-log: failed on declines: RangeError: card declined \\(1 more in \\d+\\.\\d s; the last: job ${job.id}, attempt 2/2; no attempt left\\)$`)),
      expect.stringMatching(/^INFO worker:w-log: worker stopped: 1 completed, 2 failed, 1 dead, 0 handed back, 0 leases lost, ran \d+\.\d s$/),
    ]);
  });
});

describe('stampede worker, as a user starts it', () => {
  it('prints the failure, the dead letter and, on SIGTERM, its totals on stderr at the default level', async () => {
    const job = await enqueue(db, 'fails', {}, { maxAttempts: 2 });
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: url };
    delete env.STAMPEDE_LOG; // the default level must show them
    const args = ['worker', '--handlers', 'test/fixtures/cli-handlers.mjs', '--poll-ms', '100', '--backoff-base-ms', '10', '--backoff-cap-ms', '50', '--worker-id', 'cli-1'];
    const child = spawn(process.execPath, [compiledEntry('bin/stampede.ts'), ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await until('the dead-letter line', () => stderr.includes('dead-lettered'), 30_000).catch((err) => {
      child.kill('SIGKILL');
      throw new Error(`${(err as Error).message}; its stderr:\n${stderr}`);
    });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toMatch(new RegExp(`WARN worker:cli-1: job ${job.id} failed on fails: TypeError: card declined for order 17 \\(attempt 1/2; retry at \\S+Z, in \\d+\\.\\d s\\)`));
    expect(stderr).toContain(`ERROR worker:cli-1: job ${job.id} dead-lettered on fails: attempt budget exhausted; last error TypeError: card declined for order 17 (after 2 attempts)`);
    expect(stderr).toMatch(/INFO worker:cli-1: worker stopped: 0 completed, 2 failed, 1 dead, 0 handed back, 0 leases lost, ran \d+\.\d s\n/);
    expect((await jobRow(db, job.id)).state).toBe('dead');
  }, 60_000);
});
