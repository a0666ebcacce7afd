// The OpenTelemetry SDK in a worker process of a scenario with `otel`, loaded by the harness's handler module,
// never by the engine, as an application registers its own:
// - a tracer provider whose exporter ships every span of a job (the engine's attempt spans, the handler's own)
//   into the run's history as `otel:span`;
// - a meter provider whose reader is collected every second, each collection shipped as `otel:metrics`.
// Both go in order with the worker's events, so a collection is comparable with the events shipped before it.
// The SDK is a dev dependency of the repository, as the application's own would be.
import { context, metrics, trace, type Span, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { DataPointType, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { systemClock } from '../engine/clock.ts';
import type { Handler } from '../engine/handler.ts';
import { eventMessage } from '../engine/supervisor/event-message.ts';
import { toParent } from '../engine/supervisor/event-shipper.ts';
// Types only: handlers.ts loads this module, which must not load it back (a cycle through its top-level await).
import type { HandlerReports } from './handlers.ts';

/** The attributes that name a job's span (the engine's attempt span sets both; so does the handler's below). */
const JOB_ID = 'messaging.message.id';
const ATTEMPT = 'stampede.job.attempt';

/** Reports each ended span of a job: what trace-continued judges. */
const shipper: SpanProcessor = {
  onStart: () => {},
  onEnd: (span: ReadableSpan) => {
    const jobId = Number(span.attributes[JOB_ID]);
    const attempt = Number(span.attributes[ATTEMPT]);
    if (!Number.isInteger(jobId) || !Number.isInteger(attempt)) return;
    const sc = span.spanContext();
    const shipped: HandlerReports['otel:span'] = {
      jobId,
      attempt,
      name: span.name,
      kind: span.kind === SpanKind.CONSUMER ? 'consumer' : 'internal',
      traceId: sc.traceId,
      spanId: sc.spanId,
      parentSpanId: span.parentSpanContext?.spanId ?? null,
      links: span.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId })),
      error: span.status.code === SpanStatusCode.ERROR,
    };
    toParent.ship(eventMessage<HandlerReports, 'otel:span'>('otel:span', shipped, systemClock.now()));
  },
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [shipper] }));

const tracer = trace.getTracer('stampede-harness');

/** A reader the harness collects itself (no exporter, no timer of the SDK's). */
class CollectedReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}
const reader = new CollectedReader();
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));

/** The worker's id, as the fleet starts it (`--worker-id`): its events carry it, and its RED counts only its own. */
const workerId = process.argv[process.argv.indexOf('--worker-id') + 1] ?? '';
const COLLECT_EVERY_MS = 1_000;

/**
 * Collects the meter provider every second and ships what the engine's meter (`stampede-queue`) holds: each
 * counter's value and each histogram's count, by metric, queue, operation and error.type. The collection reads
 * synchronous instruments without I/O, so no event of this process lands between it and its shipping.
 */
async function collectForever(): Promise<void> {
  for (;;) {
    await systemClock.sleep(COLLECT_EVERY_MS);
    const { resourceMetrics } = await reader.collect();
    const points: HandlerReports['otel:metrics']['points'] = [];
    for (const scope of resourceMetrics.scopeMetrics) {
      if (scope.scope.name !== 'stampede-queue') continue;
      for (const m of scope.metrics) {
        for (const p of m.dataPoints) {
          const value = m.dataPointType === DataPointType.HISTOGRAM ? (p.value as { count: number }).count : m.dataPointType === DataPointType.SUM ? (p.value as number) : null;
          if (value === null) continue;
          const a = p.attributes;
          points.push({
            name: m.descriptor.name,
            queue: String(a['messaging.destination.name'] ?? ''),
            operation: String(a['messaging.operation.name'] ?? ''),
            errorType: a['error.type'] === undefined ? null : String(a['error.type']),
            value,
          });
        }
      }
    }
    toParent.ship(eventMessage<HandlerReports, 'otel:metrics'>('otel:metrics', { workerId, points }, systemClock.now()));
  }
}
void collectForever();

/** The handler's own work as a span in the context it runs in: the attempt's child, as an application's spans are. */
export function traced<P>(handle: Handler<P>): Handler<P> {
  return (payload, ctx) =>
    tracer.startActiveSpan('harness handler', { attributes: { [JOB_ID]: String(ctx.job.id), [ATTEMPT]: ctx.attempt } }, async (span: Span) => {
      try {
        return await handle(payload, ctx);
      } finally {
        span.end();
      }
    });
}
