// The worker's RED metrics and the sampler's depth through OpenTelemetry's metrics API, read with the SDK's in-memory
// exporter (dev dependencies; @opentelemetry/api is an optional peer of the package), against the jobs a real
// Postgres ran.
import { metrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type Histogram,
} from '@opentelemetry/sdk-metrics';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../engine/clock.ts';
import { enqueueMany } from '../engine/enqueue.ts';
import { Events } from '../engine/events.ts';
import { QueueStateSampler } from '../engine/metrics/queue-state-sampler.ts';
import { otelMeter } from '../engine/metrics/otel-metrics.ts';
import { SeededRng } from '../engine/rng.ts';
import { Worker } from '../engine/worker/worker.ts';
import { freshDatabase } from './support/db.ts';
import { countByState } from './support/jobs.ts';
import { until } from './support/wait.ts';

const { db } = await freshDatabase();
const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
// Exports only when the test flushes.
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
const provider = new MeterProvider({ readers: [reader] });
metrics.setGlobalMeterProvider(provider);
afterAll(async () => {
  await provider.shutdown();
  metrics.disable();
});

class PaymentDeclinedError extends Error {
  override name = 'PaymentDeclinedError';
}

/** The data points of instrument `name` in the last (cumulative) export, for queue `queue`. */
async function points<T>(name: string, queue: string): Promise<DataPoint<T>[]> {
  exporter.reset();
  await reader.forceFlush();
  const last = exporter.getMetrics().at(-1);
  const metric = last?.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
  return ((metric?.dataPoints ?? []) as DataPoint<T>[]).filter((p) => p.attributes['messaging.destination.name'] === queue);
}

/**
 * Runs `jobs` jobs of `queue` on `workers` workers sharing one Events bus, the first attempt of every third failing;
 * resolves once all are done, with whether anything listened for claims while they ran.
 */
async function runJobs(queue: string, jobs: number, workers = 1): Promise<{ claimsHeard: boolean }> {
  const failedOnce = new Set<number>();
  const events = new Events();
  const fleet = Array.from(
    { length: workers },
    (_, i) =>
      new Worker({
        db,
        events,
        rng: new SeededRng(7 + i),
        pollMs: 20,
        backoffBaseMs: 10,
        backoffCapMs: 20,
        handlers: {
          [queue]: async (payload: { n: number }) => {
            if (payload.n % 3 === 0 && !failedOnce.has(payload.n)) {
              failedOnce.add(payload.n);
              throw new PaymentDeclinedError('card declined');
            }
          },
        },
      }),
  );
  await enqueueMany(
    db,
    Array.from({ length: jobs }, (_, n) => ({ queue, payload: { n } })),
  );
  for (const w of fleet) w.start();
  try {
    const claimsHeard = events.has('job:claimed');
    await until(`the ${jobs} jobs of ${queue} are done`, async () => (await countByState(db, queue)).done === jobs);
    return { claimsHeard };
  } finally {
    await Promise.all(fleet.map((w) => w.stop(0)));
  }
}

/** Attempts and failed attempts of `queue`'s jobs, as the database recorded them. */
async function ran(queue: string): Promise<{ attempts: number; failures: number }> {
  const sql = 'SELECT sum(attempts)::int AS attempts, sum(jsonb_array_length(errors))::int AS failures FROM stampede.jobs WHERE queue = $1';
  return (await db.query(sql, [queue])).rows[0];
}

describe('RED metrics through OpenTelemetry', () => {
  it("counts each claimed attempt and each attempt's duration, failed ones by error.type, as the database ran them", async () => {
    expect(await runJobs('emails', 12)).toEqual({ claimsHeard: true });
    const { attempts, failures } = await ran('emails');
    expect({ attempts, failures }).toEqual({ attempts: 16, failures: 4 }); // jobs 0, 3, 6, 9 failed once

    const consumed = await points<number>('messaging.client.consumed.messages', 'emails');
    expect(consumed.map((p) => [p.attributes, p.value])).toEqual([
      [{ 'messaging.system': 'stampede', 'messaging.operation.name': 'claim', 'messaging.destination.name': 'emails' }, attempts],
    ]);
    const durations = await points<Histogram>('messaging.process.duration', 'emails');
    const count = (errorType: string | undefined) => durations.find((p) => p.attributes['error.type'] === errorType)?.value.count;
    expect({ completed: count(undefined), failed: count('payment_declined_error') }).toEqual({ completed: 12, failed: failures });
    expect(durations.every((p) => p.attributes['messaging.operation.name'] === 'process' && p.value.sum! >= 0)).toBe(true);
  });

  it('counts each attempt once when workers share one Events bus', async () => {
    await runJobs('shared', 20, 3);
    const [consumed] = await points<number>('messaging.client.consumed.messages', 'shared');
    const durations = await points<Histogram>('messaging.process.duration', 'shared');
    const { attempts, failures } = await ran('shared');
    expect({ consumed: consumed.value, durations: durations.reduce((n, p) => n + p.value.count, 0) }).toEqual({ consumed: attempts, durations: attempts });
    expect(failures).toBe(7);
  });

  it("reports the sampler's depth and oldest unclaimed age per queue from its last round", async () => {
    await enqueueMany(
      db,
      Array.from({ length: 5 }, (_, n) => ({ queue: 'backlog', payload: { n } })),
    );
    const sampler = new QueueStateSampler(db, systemClock, null, { intervalMs: 60_000 });
    sampler.start();
    try {
      await until('a first sample', () => sampler.latest !== null);
      const [depth] = await points<number>('stampede.queue.depth', 'backlog');
      expect(depth.value).toBe(5);
      const [age] = await points<number>('stampede.queue.oldest_unclaimed.age', 'backlog');
      expect(age.value).toBeCloseTo(sampler.latest!.oldestUnclaimedAgeMs.backlog / 1000, 6);
    } finally {
      await sampler.stop();
    }
  });

  it('records nothing, and binds nothing, without a MeterProvider (the negative control)', async () => {
    metrics.disable(); // the API's global is a no-op meter again
    try {
      expect(otelMeter()).toBeNull();
      expect(await runJobs('unmetered', 3)).toEqual({ claimsHeard: false });
    } finally {
      metrics.setGlobalMeterProvider(provider);
    }
    expect(await points<number>('messaging.client.consumed.messages', 'unmetered')).toEqual([]);
    expect(await points<Histogram>('messaging.process.duration', 'unmetered')).toEqual([]);
    // The provider still holds what the metered worker recorded.
    expect((await points<number>('messaging.client.consumed.messages', 'emails'))[0].value).toBe(16);
  });
});
