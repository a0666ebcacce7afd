import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../engine/clock.ts';
import { eventsOf } from '../harness/history.ts';
import { firstDelivery, OutboxSink } from '../harness/runner/outbox-sink.ts';
import { HistoryRecorder } from '../harness/runner/recorder.ts';
import { until } from './support/wait.ts';

const sinks: OutboxSink[] = [];
afterEach(async () => {
  await Promise.all(sinks.splice(0).map((s) => s.stop()));
});

/** The first key `k<i>` that meets this fate on its first delivery. */
function keyFor(fate: 'apply' | 'refuse' | 'hold'): string {
  for (let i = 0; ; i++) if (firstDelivery(`k${i}`) === fate) return `k${i}`;
}

describe('the harness outbox sink', () => {
  it('applies a key once, absorbs its duplicates, refuses some keys once, and records each request', async () => {
    const recorder = new HistoryRecorder(systemClock, systemClock.now());
    const sink = new OutboxSink(recorder, systemClock, 200);
    sinks.push(sink);
    const url = await sink.start();
    const send = (key: string, attempt: number) => fetch(`${url}/deliver?key=${key}&attempt=${attempt}&relay=relay-0.1`, { method: 'POST' }).then((r) => r.status);
    const [apply, refuse, hold] = [keyFor('apply'), keyFor('refuse'), keyFor('hold')];
    expect([await send(apply, 1), await send(apply, 2)]).toEqual([200, 200]);
    expect([await send(refuse, 1), await send(refuse, 2)]).toEqual([503, 200]);
    expect(await send(hold, 1)).toBe(200);
    const outcomes = eventsOf(recorder.events, 'outbox:received').map((e) => [e.key, e.attempt, e.outcome]);
    expect(outcomes).toEqual([[apply, 1, 'applied'], [apply, 2, 'duplicate'], [refuse, 1, 'refused'], [refuse, 2, 'applied'], [hold, 1, 'applied']]);
  });

  it('applies nothing when the relay goes away while its request is held, and counts the request open until then', async () => {
    const recorder = new HistoryRecorder(systemClock, systemClock.now());
    const sink = new OutboxSink(recorder, systemClock, 30_000);
    sinks.push(sink);
    const url = await sink.start();
    const gone = new AbortController();
    const held = fetch(`${url}/deliver?key=${keyFor('hold')}&attempt=1&relay=relay-1.1`, { method: 'POST', signal: gone.signal }).catch(() => 'cut off');
    await until('the held request to be open at the sink', () => sink.open.get('relay-1.1') === 1);
    gone.abort();
    expect(await held).toBe('cut off');
    await until('the cut-off request to be recorded', () => eventsOf(recorder.events, 'outbox:received').length === 1);
    expect(eventsOf(recorder.events, 'outbox:received')[0].outcome).toBe('aborted');
    expect(sink.open.get('relay-1.1')).toBe(0);
  });
});
