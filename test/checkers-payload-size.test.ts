import { describe, expect, it } from 'vitest';
import { checkPayloadSizeRefused } from '../harness/checkers/payload-size-refused.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { padPayload } from '../harness/load/mix.ts';
import { finalState, h, job } from './support/history-builder.ts';

const LIMIT = { maxPayloadBytes: 1_000 };
const padded = (t: number, op: number, payloadBytes: number): HistoryEvent => ({ ...(h.invoke(t, op) as Extract<HistoryEvent, { type: 'enqueue:invoke' }>), payloadBytes });
const refused = (t: number, op: number, bytes: number): HistoryEvent => ({ t, node: 'load', type: 'enqueue:fail', op, queue: 'default', error: `payload: is ${bytes} bytes serialized; the limit is 1000` });

/** Op 1 at the limit, stored; op 2 one byte past it and op 3 far past it, refused; op 4 an ordinary offer. */
const history: HistoryEvent[] = [padded(1, 1, 1_000), h.ok(2, 1, 11), padded(3, 2, 1_001), refused(4, 2, 1_001), padded(5, 3, 1_600), refused(6, 3, 1_600), h.invoke(7, 4), h.ok(8, 4, 14)];
const stored = finalState([job(11, 'done', { idempotencyKey: 'op:1' }), job(14, 'done', { idempotencyKey: 'op:4' })]);

describe('payload-size-refused', () => {
  it('passes when each padded offer past the limit was refused with the documented error and left no row, and each within it was stored', () => {
    const r = checkPayloadSizeRefused(history, stored, LIMIT);
    expect(r.pass).toBe(true);
    expect(r.judged).toEqual({ n: 3, what: 'padded payloads offered' });
  });

  it('fails (negative control) when a payload past the limit was stored: measured in characters', () => {
    const wrong = history.map((e) => (e.type === 'enqueue:fail' && e.op === 3 ? h.ok(6, 3, 13) : e));
    const r = checkPayloadSizeRefused(wrong, finalState([...stored.jobs, job(13, 'done', { idempotencyKey: 'op:3' })]), LIMIT);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([
      { op: 3, bytes: 1_600, answered: 'job 13', expected: 'payload: is 1600 bytes serialized; the limit is 1000' },
      { op: 3, bytes: 1_600, stored: 'job 13 (done)' },
    ]);
  });

  it('fails when one at the limit is refused (an off-by-one), or one past it refused with another error', () => {
    const atLimit = history.map((e) => (e.type === 'enqueue:ok' && e.op === 1 ? refused(2, 1, 1_000) : e));
    expect(checkPayloadSizeRefused(atLimit, finalState([stored.jobs[1]]), LIMIT).pass).toBe(false);
    const otherError = history.map((e) => (e.type === 'enqueue:fail' && e.op === 2 ? h.fail(4, 2) : e));
    expect(checkPayloadSizeRefused(otherError, stored, LIMIT).pass).toBe(false);
  });

  it('is unknown when nothing padded was offered', () => {
    expect(checkPayloadSizeRefused([h.invoke(7, 4), h.ok(8, 4, 14)], stored, LIMIT).pass).toBe('unknown');
  });

  it('pads a payload to exactly the bytes asked, mostly in two-byte characters', () => {
    for (const bytes of [1_024, 1_025, 262_145]) {
      const p = padPayload({ kind: 'normal', op: 12, params: { durationMs: 5 } }, bytes);
      const text = JSON.stringify(p);
      expect(Buffer.byteLength(text, 'utf8')).toBe(bytes);
      expect(text.length).toBeLessThan(bytes * 0.51 + 100);
    }
    expect(() => padPayload({ big: 'x'.repeat(2_000) }, 1_024)).toThrow(/already/);
  });
});
