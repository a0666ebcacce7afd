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

/** Runs `jobs` jobs of `queue` on one worker, the first attempt of every third failing; resolves once all are done. */
async function runJobs(queue: string, jobs: number): Promise<void> {
  const failedOnce = new Set<number>();
  const worker = new Worker({
    db,
    rng: new SeededRng(7),
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
  });
  await enqueueMany(
    db,
    Array.from({ length: jobs }, (_, n) => ({ queue, payload: { n } })),
  );
  worker.start();
  try {
    await until(`the ${jobs} jobs of ${queue} are done`, async () => (await countByState(db, queue)).done === jobs);
  } finally {
    await worker.stop(0);
  }
}

describe('RED metrics through OpenTelemetry', () => {
  it("counts each claimed attempt and each attempt's duration, failed ones by error.type, as the database ran them", async () => {
    await runJobs('emails', 12);
    const [{ attempts, failures }] = (
      await db.query(
        `SELECT sum(attempts)::int AS attempts, sum(jsonb_array_length(errors))::int AS failures FROM stampede.jobs WHERE queue = 'emails'`,
      )
    ).rows;
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
      const worker = new Worker({ db, handlers: { quiet: async () => {} } });
      worker.start();
      const bound = worker.events.has('job:claimed');
      await worker.stop(0);
      expect(bound).toBe(false);
      await runJobs('unmetered', 3);
    } finally {
      metrics.setGlobalMeterProvider(provider);
    }
    expect(await points<number>('messaging.client.consumed.messages', 'unmetered')).toEqual([]);
    expect(await points<Histogram>('messaging.process.duration', 'unmetered')).toEqual([]);
    // The provider still holds what the metered worker recorded.
    expect((await points<number>('messaging.client.consumed.messages', 'emails'))[0].value).toBe(16);
  });
});
