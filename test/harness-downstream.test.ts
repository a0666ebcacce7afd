import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../engine/clock.ts';
import { eventsOf } from '../harness/history.ts';
import { Downstream } from '../harness/runner/downstream.ts';
import { HistoryRecorder } from '../harness/runner/recorder.ts';
import { defineScenario } from '../harness/scenario.ts';
import { until } from './support/wait.ts';

const servers: Downstream[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function downstream(capacity: number, callMs: number) {
  const recorder = new HistoryRecorder(systemClock, systemClock.now());
  const d = new Downstream({ capacity, callMs }, recorder, systemClock);
  servers.push(d);
  return { url: await d.start(), recorder };
}

describe('the harness downstream', () => {
  it('counts the calls open at its end, answers 200 within capacity and 503 beyond it', async () => {
    // 1 s calls: all three arrive while the first is still open, even on a loaded machine.
    const { url, recorder } = await downstream(2, 1_000);
    const statuses = await Promise.all([1, 2, 3].map((job) => fetch(`${url}/call?job=${job}&attempt=1`).then((r) => r.status)));
    expect(statuses.sort()).toEqual([200, 200, 503]);
    const calls = eventsOf(recorder.events, 'downstream:call');
    expect(calls.map((c) => c.inFlight)).toEqual([1, 2, 3]);
    expect(calls.map((c) => c.overloaded)).toEqual([false, false, true]);
    // All answered: the next call is alone again.
    await fetch(`${url}/call?job=4&attempt=1`);
    expect(eventsOf(recorder.events, 'downstream:call').at(-1)!.inFlight).toBe(1);
  });

  it("a caller that goes away mid-call (a killed worker) ends its call there: its slot does not leak", async () => {
    const { url, recorder } = await downstream(1, 60_000);
    const req = request(`${url}/call?job=1&attempt=1`);
    req.on('error', () => {});
    req.end();
    await until('the call arrived', () => eventsOf(recorder.events, 'downstream:call').length === 1);
    req.destroy();
    const abort = new AbortController();
    // The next call must find 1 open (itself), not 2.
    const next = fetch(`${url}/call?job=2&attempt=1`, { signal: abort.signal }).catch(() => {});
    await until('the second call arrived', () => eventsOf(recorder.events, 'downstream:call').length === 2);
    expect(eventsOf(recorder.events, 'downstream:call')[1]).toMatchObject({ jobId: 2, inFlight: 1, overloaded: false });
    abort.abort();
    await next;
  });
});

describe('scenario fields downstream and queueLimits', () => {
  const base = { name: 't', description: 'a test scenario', lanes: [{ queue: 'payments', priority: 0, share: 1 }] };
  it('refuses downstream jobs without a downstream, a limit on a queue no lane has, and bad values, naming the field', () => {
    expect(() => defineScenario({ ...base, mix: [{ kind: 'downstream', share: 1 }] })).toThrow('scenario.downstream: is null, but the mix has downstream jobs');
    expect(() => defineScenario({ ...base, queueLimits: { reports: { maxInFlight: 2 } } })).toThrow('scenario.queueLimits.reports: is not a lane\'s queue; expected one of payments');
    expect(() => defineScenario({ ...base, queueLimits: { payments: { maxInFlight: 0 } } })).toThrow('scenario.queueLimits.payments.maxInFlight: expected an integer >= 1, got 0');
    expect(() => defineScenario({ ...base, downstream: { capacity: 8, callMs: -1 } })).toThrow('scenario.downstream.callMs: expected a positive number, got -1');
    const s = defineScenario({ ...base, mix: [{ kind: 'downstream', share: 1 }], downstream: { capacity: 8, callMs: 100 }, queueLimits: { payments: { maxInFlight: 8 } } });
    expect(s.queueLimits).toEqual({ payments: { maxInFlight: 8 } });
  });
});
