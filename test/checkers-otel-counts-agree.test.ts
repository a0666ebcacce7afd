import { describe, expect, it } from 'vitest';
import { checkOtelCountsAgree } from '../harness/checkers/otel-counts-agree.ts';
import type { EventOf, HistoryEvent } from '../harness/history.ts';
import { finalState, h } from './support/history-builder.ts';

type Point = EventOf<'otel:metrics'>['points'][number];
const collected = (t: number, workerId: string, points: Point[]): HistoryEvent => ({ t, node: workerId, type: 'otel:metrics', workerId, points });
const consumed = (value: number): Point => ({ name: 'messaging.client.consumed.messages', queue: 'default', operation: 'claim', errorType: null, value });
const durations = (value: number, errorType: string | null = null): Point => ({ name: 'messaging.process.duration', queue: 'default', operation: 'process', errorType, value });

/** Worker w1 claims twice, completes one and fails one; its meter is collected after each step. */
const history: HistoryEvent[] = [
  h.claim(10, 1, 'w1'),
  collected(11, 'w1', [consumed(1)]),
  h.claim(20, 2, 'w1'),
  h.completed(21, 1, 'w1'),
  h.failed(22, 2, 'w1', 1, { error: 'Error: boom' }),
  collected(30, 'w1', [consumed(2), durations(1), durations(1, 'Error')]),
];

describe('otel-counts-agree', () => {
  it("passes when each collection counts the worker's own claims, completions and failures before it", () => {
    const r = checkOtelCountsAgree(history, finalState([]));
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 2, what: 'collections of a worker meter that had counted events' });
    expect(r.figure).toBe("0 series off over 2 collections; 4 claims, completions and failures behind the workers' last collections");
  });

  it('fails (negative control) when a failure is recorded without error.type: counted as a completion', () => {
    const wrong = history.map((e) => (e.type === 'otel:metrics' && e.t === 30 ? collected(30, 'w1', [consumed(2), durations(2)]) : e));
    const r = checkOtelCountsAgree(wrong, finalState([]));
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ workerId: 'w1', t: 30, queue: 'default', otel: { claimed: 2, completed: 2, failed: 0 }, events: { claimed: 2, completed: 1, failed: 1 } }]);
  });

  it("counts only the worker's own events (a restarted process counts afresh), and fails for a claim counted twice", () => {
    const restarted = [h.claim(10, 1, 'w1.1'), h.claim(20, 2, 'w1.2'), collected(30, 'w1.2', [consumed(1)])];
    expect(checkOtelCountsAgree(restarted, finalState([])).pass).toBe(true);
    expect(checkOtelCountsAgree([h.claim(10, 1, 'w1'), collected(11, 'w1', [consumed(2)])], finalState([])).pass).toBe(false);
  });

  it('is unknown with no collection, or none after an event', () => {
    expect(checkOtelCountsAgree([h.claim(10, 1, 'w1')], finalState([])).pass).toBe('unknown');
    expect(checkOtelCountsAgree([collected(5, 'w1', [])], finalState([])).pass).toBe('unknown');
  });
});
