// red-metrics (harness/checkers/red-metrics.ts) and the scrape it judges (harness/runner/metrics-scrape.ts).
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../engine/metrics/index.ts';
import { bindEngineEvents } from '../engine/metrics/event-metrics.ts';
import { Events } from '../engine/events.ts';
import { checkRedMetrics } from '../harness/checkers/red-metrics.ts';
import type { HistoryEvent, RedCounts } from '../harness/history.ts';
import { redCounts } from '../harness/runner/metrics-scrape.ts';
import { finalState, h } from './support/history-builder.ts';

const scrape = (t: number, workerId: string, red: Partial<RedCounts>): HistoryEvent => ({
  t, node: 'harness', type: 'metrics:scraped', workerId, red: { claimed: {}, completed: {}, failed: {}, leasesLost: {}, durations: {}, ...red },
});

describe('redCounts', () => {
  it("reads the RED series of a real registry's exposition, summed over reason and phase, per queue", async () => {
    const metrics = createMetrics({ defaultLabels: { worker: 'w-1' } });
    const events = new Events();
    bindEngineEvents(events, metrics);
    const claim = (jobId: number, queue: string) => events.emit('job:claimed', { jobId, queue, priority: 0, attempt: 1, workerId: 'w-1', runAt: 0, dbClaimedAt: 0, dbLeaseExpiresAt: 0, leaseToken: 't', crashCount: 0 } as any);
    claim(1, 'mail');
    claim(2, 'mail');
    claim(3, 'sms');
    events.emit('job:completed', { jobId: 1, queue: 'mail', attempt: 1, workerId: 'w-1', durationMs: 4, leaseToken: 't' });
    events.emit('job:failed', { jobId: 2, queue: 'mail', attempt: 1, maxAttempts: 5, workerId: 'w-1', durationMs: 4, error: 'TypeError: x', dbFailedAt: 0, retryAt: 0 });
    events.emit('job:failed', { jobId: 3, queue: 'sms', attempt: 1, maxAttempts: 5, workerId: 'w-1', durationMs: 4, error: 'timed out', dbFailedAt: 0, retryAt: 0 });
    events.emit('lease:lost', { jobId: 3, queue: 'sms', attempt: 1, workerId: 'w-1', phase: 'complete', leaseToken: 't' });
    events.emit('lease:rescued', { jobId: 4, queue: 'sms', attempts: 1, crashCount: 1, dead: false, crashed: true });
    events.emit('lease:rescued', { jobId: 5, queue: 'sms', attempts: 2, crashCount: 2, dead: true, crashed: true });
    events.emit('job:dead', { jobId: 5, queue: 'sms', attempt: 2, code: 'crash_loop', reason: 'crashed its worker 2 times' });
    events.emit('job:dead', { jobId: 6, queue: 'mail', attempt: 3, code: 'attempts_exhausted', reason: 'attempts exhausted: TypeError: x' });
    expect(redCounts(await metrics.registry.metrics())).toEqual({
      claimed: { mail: 2, sms: 1 },
      completed: { mail: 1 },
      failed: { mail: 1, sms: 1 },
      leasesLost: { sms: 1 },
      durations: { completed: { mail: 1 }, failed: { mail: 1, sms: 1 } },
      deadLettered: { sms: 1, mail: 1 },
      leasesExpired: { sms: 2 },
    });
  });
});

describe('red-metrics', () => {
  const work = [h.claim(10, 1, 'w-1'), h.completed(20, 1, 'w-1'), h.claim(30, 2, 'w-1'), h.failed(40, 2, 'w-1')];
  const served: Partial<RedCounts> = { claimed: { default: 2 }, completed: { default: 1 }, failed: { default: 1 }, durations: { completed: { default: 1 }, failed: { default: 1 } } };

  it("passes when an idle worker's counts equal its own events up to its scrape", () => {
    const r = checkRedMetrics([...work, scrape(100, 'w-1', served), scrape(400, 'w-1', served)], finalState([]));
    expect(r).toMatchObject({ pass: true, figure: '1 workers judged (0 left out), 0 counts off, of 4 events counted', judged: { n: 4, what: "events behind idle workers' RED counts" } });
  });

  it('fails (negative control) when failures are served as completions', () => {
    const wrong: Partial<RedCounts> = { claimed: { default: 2 }, completed: { default: 2 }, durations: { completed: { default: 2 } } };
    const r = checkRedMetrics([...work, scrape(100, 'w-1', wrong), scrape(400, 'w-1', wrong)], finalState([]));
    expect(r.pass).toBe(false);
    expect(r.examples).toContainEqual({ workerId: 'w-1', queue: 'default', series: 'failed', served: 0, events: 1 });
  });

  it("does not count another worker's events, or this worker's after its scrape", () => {
    const later = [h.claim(500, 3, 'w-1'), h.completed(510, 3, 'w-1'), h.claim(50, 4, 'w-2')];
    expect(checkRedMetrics([...work, ...later, scrape(100, 'w-1', served), scrape(400, 'w-1', served)], finalState([])).pass).toBe(true);
  });

  it('leaves out a worker whose counts moved between its two scrapes, and is unknown with nobody judged', () => {
    const moved = [...work, scrape(100, 'w-1', served), scrape(400, 'w-1', { ...served, claimed: { default: 3 } })];
    expect(checkRedMetrics(moved, finalState([]))).toMatchObject({ pass: 'unknown', figure: expect.stringContaining('1 busy or scraped once') });
    expect(checkRedMetrics([...work, scrape(100, 'w-1', served)], finalState([])).pass).toBe('unknown');
  });

  describe('dead letters and expired leases, which name no worker: the process on their node since its worker:settings', () => {
    const settings = (t: number, node: string, workerId: string) => ({ ...h.settings(t, workerId), node }) as HistoryEvent;
    const rescued = (t: number, node: string, jobId: number, dead: boolean) =>
      ({ t, node, type: 'lease:rescued', jobId, queue: 'default', attempts: 2, crashCount: 2, dead, crashed: true }) as HistoryEvent;
    const died = (t: number, node: string, jobId: number) => ({ t, node, type: 'job:dead', jobId, queue: 'default', attempt: 2, code: 'crash_loop', reason: 'crashed its worker 2 times' }) as HistoryEvent;
    const history = [
      settings(0, 'worker-0', 'w-0.1'),
      rescued(50, 'worker-0', 7, false), // the process before the restart: its counters died with it
      settings(60, 'worker-0', 'w-0.2'),
      settings(0, 'worker-1', 'w-1.1'),
      rescued(70, 'worker-1', 8, false), // another node's worker
      rescued(80, 'worker-0', 9, true),
      died(80, 'worker-0', 9),
    ];
    const counts: Partial<RedCounts> = { deadLettered: { default: 1 }, leasesExpired: { default: 1 } };

    it('passes when the served counts are its own node\'s events since it started', () => {
      const r = checkRedMetrics([...history, scrape(100, 'w-0.2', counts), scrape(400, 'w-0.2', counts)], finalState([]));
      expect(r).toMatchObject({ pass: true, figure: '1 workers judged (0 left out), 0 counts off, of 2 events counted' });
    });

    it('fails (negative control) when a dead-lettered job or a rescue goes uncounted', () => {
      const none: Partial<RedCounts> = { deadLettered: {}, leasesExpired: {} };
      const r = checkRedMetrics([...history, scrape(100, 'w-0.2', none), scrape(400, 'w-0.2', none)], finalState([]));
      expect(r.pass).toBe(false);
      expect(r.examples).toEqual([
        { workerId: 'w-0.2', queue: 'default', series: 'dead-lettered', served: 0, events: 1 },
        { workerId: 'w-0.2', queue: 'default', series: 'leases expired', served: 0, events: 1 },
      ]);
    });

    it('does not judge them in a stored run whose scrape did not read them', () => {
      // scrape() builds a scrape with neither series, as a run recorded before they were read has.
      const r = checkRedMetrics([...history, scrape(100, 'w-0.2', {}), scrape(400, 'w-0.2', {})], finalState([]));
      expect(r.pass).toBe('unknown'); // nothing else happened: the judged worker did nothing it could be held to
    });
  });

  it('is unknown when the judged workers did nothing', () => {
    expect(checkRedMetrics([scrape(100, 'w-1', {}), scrape(400, 'w-1', {})], finalState([])).pass).toBe('unknown');
  });
});
