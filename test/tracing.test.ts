// Trace context from an enqueuing request through two attempts of a job to its effect, with the OpenTelemetry SDK's
// in-memory exporter (dev dependencies; @opentelemetry/api is an optional peer of the package).
import { context, trace, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, describe, expect, it } from 'vitest';
import { enqueue } from '../engine/enqueue.ts';
import { ValidationError } from '../engine/errors.ts';
import { SeededRng } from '../engine/rng.ts';
import { Worker } from '../engine/worker/worker.ts';
import { freshDatabase } from './support/db.ts';
import { countByState } from './support/jobs.ts';
import { until } from './support/wait.ts';

const { db } = await freshDatabase();
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager().enable();
context.setGlobalContextManager(contextManager);
trace.setGlobalTracerProvider(provider);
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
});

const tracer = trace.getTracer('test');
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

describe('trace context', () => {
  it('a span tree from the enqueuing request through two attempts to the effect', async () => {
    let attempts = 0;
    const worker = new Worker({
      db,
      rng: new SeededRng(1),
      pollMs: 20,
      backoffBaseMs: 10,
      backoffCapMs: 20,
      handlers: {
        orders: async () => {
          attempts++;
          if (attempts === 1) throw new Error('card network timed out');
          // The effect, in the attempt's context: a child of the second attempt's span.
          await tracer.startActiveSpan('charge card', async (span) => span.end());
        },
      },
    });
    // The request that enqueues: its span is active, so enqueue captures its context.
    const job = await tracer.startActiveSpan('POST /orders', async (span) => {
      try {
        return await enqueue(db, 'orders', { order: 42 });
      } finally {
        span.end();
      }
    });
    worker.start();
    try {
      await until('the order is done', async () => (await countByState(db, 'orders')).done === 1);
    } finally {
      await worker.stop(0);
    }
    const spans = exporter.getFinishedSpans();
    const byName = (name: string) => spans.filter((s) => s.name === name);
    const [request] = byName('POST /orders');
    const [first, second] = byName('process orders').sort((a, b) => (a.attributes['stampede.job.attempt'] as number) - (b.attributes['stampede.job.attempt'] as number));
    const [effect] = byName('charge card');
    // Attempt 1: a child of the request, in its trace; failed.
    expect(first.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(parentOf(first)).toBe(request.spanContext().spanId);
    expect(first.kind).toBe(SpanKind.CONSUMER);
    expect(first.status.code).toBe(SpanStatusCode.ERROR);
    expect(first.attributes).toMatchObject({ 'messaging.system': 'stampede', 'messaging.operation.type': 'process', 'messaging.destination.name': 'orders', 'messaging.message.id': String(job.id) });
    // Attempt 2: a trace of its own, linked to the request.
    expect(parentOf(second)).toBeUndefined();
    expect(second.links.map((l) => l.context.spanId)).toEqual([request.spanContext().spanId]);
    expect(second.status.code).not.toBe(SpanStatusCode.ERROR);
    // The effect: a child of attempt 2.
    expect(parentOf(effect)).toBe(second.spanContext().spanId);
    expect(effect.spanContext().traceId).toBe(second.spanContext().traceId);
  });

  it('takes an explicit traceparent, refuses a malformed one, and stores none outside a span', async () => {
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const given = await enqueue(db, 'explicit', {}, { traceparent: tp });
    const none = await enqueue(db, 'explicit', {});
    const rows = (await db.query('SELECT id, trace_parent FROM stampede.jobs WHERE queue = $1 ORDER BY id', ['explicit'])).rows;
    expect(rows).toEqual([
      { id: given.id, trace_parent: tp },
      { id: none.id, trace_parent: null },
    ]);
    await expect(enqueue(db, 'explicit', {}, { traceparent: '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01' })).rejects.toThrow(ValidationError);
    await expect(enqueue(db, 'explicit', {}, { traceparent: 'not a traceparent' })).rejects.toThrow(/traceparent/);
  });
});
