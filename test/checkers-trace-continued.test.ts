import { describe, expect, it } from 'vitest';
import { checkOtelCountsAgree } from '../harness/checkers/otel-counts-agree.ts';
import { checkTraceContinued } from '../harness/checkers/trace-continued.ts';
import type { EventOf, HistoryEvent } from '../harness/history.ts';
import { parseTraceparent, traceparentOf } from '../harness/load/traceparent.ts';
import { finalState, h } from './support/history-builder.ts';

const tp = traceparentOf(1)(7);
const enq = parseTraceparent(tp)!;
const enqueued: HistoryEvent = { ...h.ok(0, 7, 1), traceparent: tp } as HistoryEvent;

type SpanFields = Partial<Omit<EventOf<'otel:span'>, 'type' | 't' | 'node'>>;
const span = (t: number, attempt: number, x: SpanFields = {}): HistoryEvent => ({
  t, node: 'w1', type: 'otel:span', jobId: 1, attempt, name: 'process default', kind: 'consumer', traceId: enq.traceId, spanId: `a${attempt}`.padEnd(16, '0'),
  parentSpanId: enq.spanId, links: [], error: false, ...x,
});
const handlerSpan = (t: number, attempt: number, parent: string, traceId: string): HistoryEvent =>
  span(t, attempt, { kind: 'internal', name: 'harness handler', spanId: `h${attempt}`.padEnd(16, '0'), parentSpanId: parent, traceId });

/** A job enqueued under a trace, failed once and done on its retry: two attempt spans and their handlers' spans. */
const retryTrace = 'f'.repeat(32);
const good: HistoryEvent[] = [
  enqueued,
  handlerSpan(10, 1, 'a1'.padEnd(16, '0'), enq.traceId),
  span(11, 1),
  h.failed(12, 1, 'w1', 1),
  handlerSpan(20, 2, 'a2'.padEnd(16, '0'), retryTrace),
  span(21, 2, { traceId: retryTrace, parentSpanId: null, links: [{ traceId: enq.traceId, spanId: enq.spanId }] }),
  h.completed(22, 1, 'w1', 2),
];

describe('trace-continued', () => {
  it('passes when the first attempt is a child of the enqueue, the retry a new trace linked to it, each handler span its attempt\'s child', () => {
    const r = checkTraceContinued(good, finalState([]));
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 4, what: 'attempt and handler spans of traced jobs, and ended attempts without one' });
    expect(r.figure).toBe('2 attempt spans (1 retries), 2 handler spans; 0 ended attempts without a span, 0 off their trace');
  });

  it('fails (negative control) when the claim dropped the trace context: the attempts ended with no span', () => {
    const dropped = good.filter((e) => e.type !== 'otel:span');
    const r = checkTraceContinued(dropped, finalState([]));
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([
      { jobId: 1, attempt: 1, spanMissing: true },
      { jobId: 1, attempt: 2, spanMissing: true },
    ]);
  });

  it('fails for a mis-parented first attempt, a retry that stays in the enqueue\'s trace, and a handler span outside its attempt', () => {
    const bad = good.map((e) => {
      if (e.type !== 'otel:span') return e;
      if (e.kind === 'consumer' && e.attempt === 1) return { ...e, parentSpanId: '1'.repeat(16) };
      if (e.kind === 'consumer') return { ...e, traceId: enq.traceId, parentSpanId: enq.spanId, links: [] };
      return { ...e, parentSpanId: null };
    });
    const r = checkTraceContinued(bad, finalState([]));
    expect(r.pass).toBe(false);
    expect(r.examples).toHaveLength(4);
    expect(r.examples![0]).toMatchObject({ jobId: 1, attempt: 1, parent: '1'.repeat(16) });
  });

  it('is unknown without a traced job: an untraced one ended with no span judges nothing', () => {
    expect(checkTraceContinued([h.ok(0, 7, 1), h.completed(10, 1, 'w1', 1)], finalState([])).pass).toBe('unknown');
  });
});

describe('trace-continued across a hand-back', () => {
  it('a claim handed back and run again under the same attempt number has two spans, each handler span the child of its own', () => {
    const twice = [
      enqueued,
      handlerSpan(10, 1, 'a1'.padEnd(16, '0'), enq.traceId),
      span(11, 1),
      handlerSpan(20, 1, 'b1'.padEnd(16, '0'), enq.traceId),
      span(21, 1, { spanId: 'b1'.padEnd(16, '0') }),
      h.completed(22, 1, 'w1', 1),
    ];
    const r = checkTraceContinued(twice, finalState([]));
    expect(r.pass).toBe(true);
    expect(r.judged.n).toBe(4);
  });
});

describe('the OpenTelemetry checks on an installation without the SDK', () => {
  it('say what to install (notHere) instead of passing or failing', () => {
    const absent = { t: 0, node: 'harness', type: 'otel:absent', missing: ['@opentelemetry/sdk-trace-base'], install: 'npm install --save-dev @opentelemetry/sdk-trace-base' } as HistoryEvent;
    const ended = [absent, h.completed(22, 1, 'w1', 1)];
    for (const r of [checkTraceContinued(ended, finalState([])), checkOtelCountsAgree([absent, h.claim(10, 1, 'w1')], finalState([]))]) {
      expect(r.pass).toBe('unknown');
      expect(r.notHere).toBe('npm install --save-dev @opentelemetry/sdk-trace-base');
      expect(r.figure).toContain('no OpenTelemetry SDK here (@opentelemetry/sdk-trace-base)');
    }
  });
});
