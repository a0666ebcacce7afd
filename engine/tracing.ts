/**
 * Trace context across the queue (W3C `traceparent`), through the
 * OpenTelemetry API when the application has it installed (an optional peer
 * dependency, loaded once by otel.ts, never required). Without it nothing is
 * captured at enqueue (an explicit `traceparent` is still stored) and the
 * worker starts no spans.
 *
 * The spans follow the OpenTelemetry messaging conventions: each attempt is
 * a CONSUMER span `process <queue>`; the first attempt is a child of the
 * context that enqueued the job, a retry (attempt 2 and on) starts a trace of
 * its own with a link to it, so one request's trace does not stretch over
 * hours of backoff. A job enqueued outside any trace gets no spans.
 */
import { ValidationError } from './errors.ts';
import { otel } from './otel.ts';

type Span = import('@opentelemetry/api').Span;
type Context = import('@opentelemetry/api').Context;

/** version-traceId-spanId-flags, lower-case hex (W3C Trace Context, version 00). */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A traceparent's ids and flags; null for anything that is not one (the harness's trace checker reads its producer's with it). */
export function parseTraceparent(value: string): { traceId: string; spanId: string; traceFlags: number } | null {
  const m = TRACEPARENT.exec(value);
  return m ? { traceId: m[1], spanId: m[2], traceFlags: parseInt(m[3], 16) } : null;
}

export function validateTraceparent(value: unknown, field: string): string {
  const m = typeof value === 'string' ? TRACEPARENT.exec(value) : null;
  if (!m || /^0+$/.test(m[1]) || /^0+$/.test(m[2])) {
    throw new ValidationError(field, 'expected a W3C traceparent: 00-<32 hex trace id>-<16 hex span id>-<2 hex flags>, ids not all zero');
  }
  return value as string;
}

/** The active span's context as a traceparent, or null (no OpenTelemetry, or no valid active span). */
export function activeTraceparent(): string | null {
  if (!otel) return null;
  const sc = otel.trace.getSpanContext(otel.context.active());
  if (!sc || !otel.isSpanContextValid(sc)) return null;
  return `00-${sc.traceId}-${sc.spanId}-${sc.traceFlags.toString(16).padStart(2, '0')}`;
}

/** One attempt's span and the context its handler runs in. */
export interface AttemptSpan {
  span: Span;
  context: Context;
}

/**
 * Starts attempt `attempt`'s span for a job that carries trace context; null
 * without OpenTelemetry or without a traceparent. Only traced jobs get spans:
 * the worker's hot path allocates nothing for the others (a repository with
 * the API installed as a dev dependency runs its benches untraced).
 */
export function startAttemptSpan(job: { id: number; queue: string; traceparent: string | null }, attempt: number): AttemptSpan | null {
  if (!otel || job.traceparent === null) return null;
  const ids = parseTraceparent(job.traceparent);
  if (!ids) return null;
  const producer = { ...ids, isRemote: true };
  const first = attempt === 1;
  const parent = first ? otel.trace.setSpanContext(otel.ROOT_CONTEXT, producer) : otel.ROOT_CONTEXT;
  const span = otel.trace.getTracer('stampede').startSpan(
    `process ${job.queue}`,
    {
      kind: otel.SpanKind.CONSUMER,
      attributes: {
        'messaging.system': 'stampede',
        'messaging.operation.type': 'process',
        'messaging.operation.name': 'process',
        'messaging.destination.name': job.queue,
        'messaging.message.id': String(job.id),
        'stampede.job.attempt': attempt,
      },
      ...(first ? {} : { links: [{ context: producer }] }),
      root: !first,
    },
    parent,
  );
  return { span, context: otel.trace.setSpan(parent, span) };
}

/** Runs fn in the attempt's context (its handler: spans it starts are the attempt's children). */
export function inAttempt<T>(a: AttemptSpan | null, fn: () => T): T {
  return a && otel ? otel.context.with(a.context, fn) : fn();
}

/** Ends the attempt's span, as an error when the attempt failed. */
export function endAttemptSpan(a: AttemptSpan | null, failed: boolean, error: unknown): void {
  if (!a || !otel) return;
  if (failed) {
    if (error instanceof Error) a.span.recordException(error);
    a.span.setStatus({ code: otel.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  }
  a.span.end();
}
