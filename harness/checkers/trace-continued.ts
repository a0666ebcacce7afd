import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { parseTraceparent } from '../load/traceparent.ts';
import { firstN, fmt, otelAbsent, otelNotHere, type CheckerDef } from './types.ts';

export type TraceContinuedBounds = Record<string, never>;

type Span = Extract<HistoryEvent, { type: 'otel:span' }>;

const key = (jobId: number, attempt: number) => `${jobId}/${attempt}`;

/**
 * A traced job's attempts continue the trace that enqueued it, as
 * engine/tracing.ts and docs/operating.md say, after the OpenTelemetry
 * messaging conventions:
 *
 * - every attempt of a traced job (enqueued with a traceparent: the
 *   generator's `enqueue:ok` records it) that ended (completed or failed)
 *   has its CONSUMER span: the span ends as the handler settles, before the
 *   outcome is written, and is shipped in order with the worker's events, so
 *   a process killed before shipping it never reported the outcome either;
 * - attempt 1's span is in the enqueue's trace, a child of the enqueuing
 *   span; a retry's starts a trace of its own (no parent) with a link to the
 *   enqueuing span;
 * - the handler's own span is a child of its attempt's span, in its trace
 *   (of one of them: a claim handed back uncharged runs again under the same
 *   attempt number, with a span of its own).
 *
 * Unknown when no span of a traced job was judged (a scenario without
 * `otel`, or nothing ended).
 */
export function checkTraceContinued(history: readonly HistoryEvent[], _final: FinalState): InvariantResult {
  const enqueued = new Map<number, { traceId: string; spanId: string }>();
  // A claim handed back uncharged is claimed again under the same attempt number: one attempt, several spans.
  const attempts = new Map<string, Span[]>();
  const handlers: Span[] = [];
  const ended: { jobId: number; attempt: number }[] = [];
  const absent = otelAbsent(history);
  for (const e of history) {
    if (e.type === 'enqueue:ok' && e.traceparent) {
      const tp = parseTraceparent(e.traceparent);
      if (tp) enqueued.set(e.jobId, tp);
    } else if (e.type === 'otel:span') {
      if (e.kind === 'consumer') attempts.set(key(e.jobId, e.attempt), [...(attempts.get(key(e.jobId, e.attempt)) ?? []), e]);
      else handlers.push(e);
    } else if (e.type === 'job:completed' || e.type === 'job:failed') {
      ended.push({ jobId: e.jobId, attempt: e.attempt });
    }
  }
  const wrong: Record<string, unknown>[] = [];
  let missing = 0;
  let judged = 0;
  for (const end of ended) {
    const tp = enqueued.get(end.jobId);
    if (!tp) continue;
    if (attempts.has(key(end.jobId, end.attempt))) continue;
    missing++;
    wrong.push({ jobId: end.jobId, attempt: end.attempt, spanMissing: true });
  }
  const spans = [...attempts.values()].flat();
  for (const span of spans) {
    const tp = enqueued.get(span.jobId);
    if (!tp) continue;
    judged++;
    const linked = span.links.some((l) => l.traceId === tp.traceId && l.spanId === tp.spanId);
    const ok = span.attempt === 1 ? span.traceId === tp.traceId && span.parentSpanId === tp.spanId : span.parentSpanId === null && span.traceId !== tp.traceId && linked;
    if (!ok) wrong.push({ jobId: span.jobId, attempt: span.attempt, enqueuedUnder: `${tp.traceId}/${tp.spanId}`, trace: span.traceId, parent: span.parentSpanId, links: span.links.length });
  }
  let handlerSpans = 0;
  for (const h of handlers) {
    const runs = attempts.get(key(h.jobId, h.attempt));
    if (!runs || !enqueued.has(h.jobId)) continue;
    handlerSpans++;
    if (!runs.some((a) => h.parentSpanId === a.spanId && h.traceId === a.traceId)) {
      wrong.push({ jobId: h.jobId, attempt: h.attempt, handlerSpanParent: h.parentSpanId, attemptSpans: runs.map((a) => a.spanId) });
    }
  }
  const n = judged + handlerSpans + missing;
  const base = {
    name: 'trace-continued',
    bound: "every ended attempt of a traced job has its span; attempt 1 a child of the enqueuing span, a retry a new trace linked to it; the handler's span the attempt's child",
    judged: { n, what: 'attempt and handler spans of traced jobs, and ended attempts without one' },
    figure:
      `${fmt(judged)} attempt spans (${fmt(spans.filter((s) => s.attempt > 1 && enqueued.has(s.jobId)).length)} retries), ${fmt(handlerSpans)} handler spans; ` +
      `${fmt(missing)} ended attempts without a span, ${fmt(wrong.length - missing)} off their trace`,
  };
  if (wrong.length) return { ...base, pass: false, examples: firstN(wrong) };
  return absent ? otelNotHere(base, absent) : { ...base, pass: n > 0 ? true : 'unknown' };
}

export const traceContinued: CheckerDef<TraceContinuedBounds> = {
  name: 'trace-continued',
  says: "a traced job's attempts continue its enqueue's trace: the first a child, retries linked, the handler's spans their children",
  check: checkTraceContinued,
  bounds: {},
  defaults: {},
};
