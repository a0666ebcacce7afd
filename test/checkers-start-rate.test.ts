// start-rate on small hand-written histories: claims of a rate-limited queue within burst + rate x (T + lag) pass,
// a herd started at once fails, a limit the load never pressed is unknown.
import { describe, expect, it } from 'vitest';
import { checkStartRate } from '../harness/checkers/start-rate.ts';
import type { HistoryEvent } from '../harness/history.ts';
import { finalState, h } from './support/history-builder.ts';

const bounds = { queue: 'sends', perSecond: 10, lagMs: 200 };
const final = finalState([]);
const claims = (times: number[], queue = 'sends'): HistoryEvent[] => times.map((dbTime, i) => h.claim(dbTime, i + 1, `w${i % 3}`, 1, { dbTime, queue }));

describe('start-rate', () => {
  it('passes a herd started at the bucket pace: 10 at once, then one per 100 ms', () => {
    const times = [...Array.from({ length: 10 }, () => 1_000), ...Array.from({ length: 40 }, (_, i) => 1_100 + i * 100)];
    const r = checkStartRate(claims(times), final, bounds);
    expect(r.pass).toBe(true);
    expect(r.judged?.n).toBeGreaterThan(30);
    expect(r.judged?.what).toBe('claims of sends while it ran at half its rate or more');
  });

  it('fails (negative control) a herd of 48 started at once, as free slots would without the bucket', () => {
    const r = checkStartRate(claims(Array.from({ length: 48 }, (_, i) => 1_000 + i)), final, bounds);
    expect(r.pass).toBe(false);
    expect(r.examples).toEqual([{ queue: 'sends', claims: 48, spanMs: 47, allowed: 12 }]);
  });

  it('is unknown when the load never pressed the bucket, and leaves other queues out', () => {
    const light = Array.from({ length: 20 }, (_, i) => 1_000 + i * 500);
    expect(checkStartRate([...claims(light), ...claims(Array(50).fill(5_000), 'other')], final, bounds).pass).toBe('unknown');
    expect(checkStartRate(claims(light), final, { ...bounds, queue: '' }).pass).toBe('unknown');
  });
});
