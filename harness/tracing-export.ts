// The OpenTelemetry SDK in a worker process of a traced scenario (the scenario's `tracing`), loaded by the
// harness's handler module, never by the engine: a tracer provider whose exporter ships every span of a job
// (the engine's attempt spans, the handler's own) into the run's history as `otel:span`, in order with the
// worker's events. The SDK is a dev dependency of the repository, as the application's own would be.
import { context, trace, type Span, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
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
