import { register as globalRegistry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { enqueueMany } from '../engine/enqueue.ts';
import { Events } from '../engine/events.ts';
import { createLogger } from '../engine/log.ts';
import { bindEngineEvents, failureReason, MAX_FAILURE_REASONS } from '../engine/metrics/event-metrics.ts';
import { createMetrics, type StampedeMetrics } from '../engine/metrics/registry.ts';
import { SeededRng } from '../engine/rng.ts';
import { Worker } from '../engine/worker/worker.ts';
import { freshDatabase } from './support/db.ts';
import { until } from './support/wait.ts';

/** The value of one sample line (`name{labels} value`) in the exposition text; undefined when absent. */
async function sample(metrics: StampedeMetrics, series: string): Promise<number | undefined> {
  const line = (await metrics.text()).split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('RED counters fed by engine events', () => {
  const events = new Events();
  const metrics = createMetrics();
  const unbind = bindEngineEvents(events, metrics);
  const base = { attempt: 1, maxAttempts: 5, workerId: 'w1', crashCount: 0, dbLeaseExpiresAt: 0, fairnessKey: null, leaseToken: 't' };

  it('counts claims, completions, failures by reason, dead letters, lost and expired leases, cron refusals', async () => {
    for (let i = 0; i < 3; i++) events.emit('job:claimed', { ...base, jobId: i, queue: 'mail', priority: 5, runAt: 1_000, dbClaimedAt: 3_500, dbTakenAt: 3_500 });
    events.emit('job:claimed', { ...base, jobId: 9, queue: 'sms', priority: 0, runAt: 0, dbClaimedAt: 100, dbTakenAt: 100 });
    events.emit('job:completed', { ...base, jobId: 0, queue: 'mail', durationMs: 40 });
    events.emit('job:completed', { ...base, jobId: 1, queue: 'mail', durationMs: 2_000 });
    events.emit('job:failed', { ...base, jobId: 2, queue: 'mail', durationMs: 30_000, error: 'JobTimeoutError: handler exceeded its timeout of 30000 ms', dbFailedAt: 0, retryAt: 0 });
    events.emit('job:failed', { ...base, jobId: 9, queue: 'sms', durationMs: 5, error: 'TypeError: bad field', dbFailedAt: 0, retryAt: 0 });
    events.emit('job:failed', { ...base, jobId: 9, queue: 'sms', durationMs: 5, error: 'TypeError: other field', dbFailedAt: 0, retryAt: 0 });
    events.emit('job:dead', { jobId: 9, queue: 'sms', attempt: 6, code: 'attempts_exhausted', reason: 'attempts exhausted: TypeError: bad field' });
    events.emit('job:dead', { jobId: 7, queue: 'sms', attempt: 2, code: 'crash_loop', reason: 'crashed its worker 2 times' });
    events.emit('lease:lost', { ...base, jobId: 4, queue: 'mail', phase: 'heartbeat' });
    events.emit('lease:rescued', { jobId: 4, queue: 'mail', attempts: 1, crashCount: 1, dead: false, crashed: true });
    events.emit('cron:refused', { nodeId: 'sched-2', reason: 'clock skew', skewMs: -4_500 });

    expect(await sample(metrics, 'stampede_jobs_claimed_total{queue="mail"}')).toBe(3);
    expect(await sample(metrics, 'stampede_jobs_claimed_total{queue="sms"}')).toBe(1);
    expect(await sample(metrics, 'stampede_jobs_completed_total{queue="mail"}')).toBe(2);
    expect(await sample(metrics, 'stampede_jobs_failed_total{queue="mail",reason="timeout"}')).toBe(1);
    expect(await sample(metrics, 'stampede_jobs_failed_total{queue="sms",reason="type_error"}')).toBe(2);
    expect(await sample(metrics, 'stampede_jobs_dead_lettered_total{queue="sms",reason="attempts_exhausted"}')).toBe(1);
    expect(await sample(metrics, 'stampede_jobs_dead_lettered_total{queue="sms",reason="crash_loop"}')).toBe(1);
    expect(await sample(metrics, 'stampede_leases_lost_total{queue="mail",phase="heartbeat"}')).toBe(1);
    expect(await sample(metrics, 'stampede_leases_expired_total{queue="mail"}')).toBe(1);
    expect(await sample(metrics, 'stampede_cron_refusals_total{node="sched-2"}')).toBe(1);
    expect(await sample(metrics, 'stampede_clock_skew_seconds{node="sched-2"}')).toBe(-4.5);
  });

  it('observes durations in seconds by outcome, and the due-to-claim delay by lane', async () => {
    expect(await sample(metrics, 'stampede_job_duration_seconds_count{queue="mail",outcome="completed"}')).toBe(2);
    expect(await sample(metrics, 'stampede_job_duration_seconds_sum{queue="mail",outcome="completed"}')).toBeCloseTo(2.04, 9);
    expect(await sample(metrics, 'stampede_job_duration_seconds_bucket{le="0.05",queue="mail",outcome="completed"}')).toBe(1);
    expect(await sample(metrics, 'stampede_job_duration_seconds_bucket{le="30",queue="mail",outcome="failed"}')).toBe(1);
    expect(await sample(metrics, 'stampede_job_claim_delay_seconds_sum{queue="mail",priority="5"}')).toBeCloseTo(7.5, 9);
    expect(await sample(metrics, 'stampede_job_claim_delay_seconds_bucket{le="2.5",queue="mail",priority="5"}')).toBe(3);
    expect(await sample(metrics, 'stampede_job_claim_delay_seconds_bucket{le="1",queue="mail",priority="5"}')).toBe(0);
  });

  it('stops counting once unbound', async () => {
    unbind();
    events.emit('job:completed', { ...base, jobId: 0, queue: 'mail', durationMs: 1 });
    expect(await sample(metrics, 'stampede_jobs_completed_total{queue="mail"}')).toBe(2);
  });

  it('lives on its own registry, never the global one, so two instances coexist', async () => {
    const other = createMetrics({ defaultLabels: { node: 'w2' } });
    other.claims.inc({ queue: 'mail' });
    expect(await sample(other, 'stampede_jobs_claimed_total{queue="mail",node="w2"}')).toBe(1);
    expect(await sample(metrics, 'stampede_jobs_claimed_total{queue="mail"}')).toBe(3);
    expect(globalRegistry.getMetricsAsArray().filter((m) => m.name.startsWith('stampede_'))).toEqual([]);
  });

  it('clock skew is settable by the materializer and refuses a non-number', async () => {
    metrics.setClockSkew('sched-1', 0.25);
    expect(await sample(metrics, 'stampede_clock_skew_seconds{node="sched-1"}')).toBe(0.25);
    expect(() => metrics.setClockSkew('sched-1', Number.NaN)).toThrow(/skewSeconds is NaN/);
  });
});

describe('label values stay bounded', () => {
  it.each([
    ['JobTimeoutError: handler exceeded its timeout of 200 ms', 'timeout'],
    ['Error: upstream timed out after 5s', 'timeout'],
    ['LeaseLostError: job 4: lease lost', 'lease_lost'],
    ['TypeError: bad field', 'type_error'],
    ['PaymentDeclinedError: card 4242 declined', 'payment_declined_error'],
    ['HTTPServerError: 503', 'http_server_error'],
    ['NonErrorThrown: just a string', 'non_error_thrown'],
    ['Error: downstream said 503 for order 991', 'error'],
    ['something odd, id=17', 'error'],
  ])('failureReason(%j) = %s', (error, reason) => {
    expect(failureReason(error)).toBe(reason);
  });

  it(`a flood of distinct error classes makes at most ${MAX_FAILURE_REASONS} reasons, then "other"`, async () => {
    const events = new Events();
    const metrics = createMetrics();
    bindEngineEvents(events, metrics);
    for (let i = 0; i < 50; i++) {
      events.emit('job:failed', { jobId: i, queue: 'q', attempt: 1, maxAttempts: 5, workerId: 'w', durationMs: 1, error: `Kind${i}Error: x`, dbFailedAt: 0, retryAt: 0 });
    }
    const values = (await metrics.failures.get()).values;
    expect(values).toHaveLength(MAX_FAILURE_REASONS + 1);
    expect(values.find((v) => v.labels.reason === 'other')?.value).toBe(50 - MAX_FAILURE_REASONS);
  });
});

describe('with a real worker on a real database', async () => {
  const { db } = await freshDatabase();
  const workers: Worker[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop(0)));
  });

  it('the counters equal what the worker did', async () => {
    const events = new Events();
    const metrics = createMetrics();
    bindEngineEvents(events, metrics);
    await enqueueMany(db, [
      ...Array.from({ length: 20 }, (_, i) => ({ queue: 'ok', payload: { i } })),
      ...Array.from({ length: 3 }, (_, i) => ({ queue: 'bad', payload: { i }, options: { maxAttempts: 1 } })),
    ]);
    let dead = 0;
    events.on('job:dead', () => dead++);
    let completed = 0;
    events.on('job:completed', () => completed++);
    const worker = new Worker({
      db,
      events,
      rng: new SeededRng(7),
      pollMs: 50,
      log: createLogger('worker', 'silent'),
      handlers: { ok: () => {}, bad: () => { throw new RangeError('amount out of range'); } },
    });
    workers.push(worker);
    worker.start();
    await until('20 completed and 3 dead', () => completed === 20 && dead === 3);
    expect(await sample(metrics, 'stampede_jobs_claimed_total{queue="ok"}')).toBe(20);
    expect(await sample(metrics, 'stampede_jobs_claimed_total{queue="bad"}')).toBe(3);
    expect(await sample(metrics, 'stampede_jobs_completed_total{queue="ok"}')).toBe(20);
    expect(await sample(metrics, 'stampede_jobs_failed_total{queue="bad",reason="range_error"}')).toBe(3);
    expect(await sample(metrics, 'stampede_jobs_dead_lettered_total{queue="bad",reason="attempts_exhausted"}')).toBe(3);
    expect(await sample(metrics, 'stampede_job_duration_seconds_count{queue="ok",outcome="completed"}')).toBe(20);
    // The claim delay comes from two database timestamps: never negative, and observed once per claim.
    expect(await sample(metrics, 'stampede_job_claim_delay_seconds_count{queue="ok",priority="0"}')).toBe(20);
  });
});
