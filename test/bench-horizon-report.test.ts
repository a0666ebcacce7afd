import { describe, expect, it } from 'vitest';
import { horizonChartSpec, renderHorizonMarkdown } from '../bench/horizon-report.ts';
import { renderSvg } from '../reports/render/charts.ts';
import { fillLatencies, type HorizonMinute, type HorizonResult } from '../bench/workloads/horizon.ts';

const minute = (m: number, over: Partial<HorizonMinute> = {}): HorizonMinute => ({
  minute: m, backlog: 0, p99Ms: null, notStarted: 0, lockWaitMaxMs: 0, lockWaitSamples: 0, deadTuples: 0, tableBytes: 0, indexBytes: 0, horizonAgeS: 0, ...over,
});

describe('the horizon workload per minute', () => {
  it("buckets each job's due-to-start by the minute it was due, and counts the offered jobs of a minute that never started", () => {
    const t0 = 1_000;
    const minutes = [minute(1), minute(2)];
    // Minute 1: 100 jobs, 1..100 ms; minute 2: one job at 5 s (the rest never started).
    const lat = [...Array.from({ length: 100 }, (_, i) => i + 1), 5_000];
    const due = [...Array.from({ length: 100 }, (_, i) => t0 + i * 100), t0 + 61_000];
    fillLatencies(minutes, t0, lat, due, 2);
    expect(minutes.map((m) => [m.p99Ms, m.notStarted])).toEqual([[99, 20], [5_000, 119]]);
  });

  it('writes a table row per config and minute, and a chart with one line per config in each panel', async () => {
    const r: HorizonResult = {
      ratePerSec: 800, batchMs: 20, minutes: 2, readers: 3, readerHoldS: 120,
      runs: ['stampede', 'graphile-batched'].map((id, k) => ({
        id, label: `${id} label`, readerHolds: 1, handled: 96_000,
        offered: { committed: 96_000, errors: 0, shed: 0, achievedPerSec: 800, offeredPerSec: 800 },
        minutes: [minute(1, { backlog: 10 * k, p99Ms: 12.5, deadTuples: 48_000 }), minute(2, { backlog: 155_000 * k, p99Ms: 300, lockWaitMaxMs: 350, tableBytes: 2 ** 20, indexBytes: 2 ** 20 })],
      })),
    };
    const md = renderHorizonMarkdown(r, { command: 'npm run bench -- --preset horizon --minutes 2', date: 'd', machine: 'm', loadAverage: 'l' });
    expect(md).toContain('`npm run bench -- --preset horizon --minutes 2`');
    expect(md).toContain('| graphile-batched | 800 / 800 | 0 | 96,000 | 155,000 | 155,000 | 300 | 350 | 48,000 | 2.0 | 1 |');
    expect(md).toContain('| stampede | 1 | 0 | 12.5 | 0 | 0.0, 0 | 48,000 | 0.0 | 0.0 | 0 |');
    const spec = horizonChartSpec(r) as unknown as { vconcat: unknown[]; data: { values: { config: string; lockWait: number | null }[] } };
    expect(spec.vconcat).toHaveLength(5);
    expect(new Set(spec.data.values.map((v) => v.config))).toEqual(new Set(['stampede', 'graphile-batched']));
    // No wait is no point on a log scale, not a zero it cannot draw.
    expect(spec.data.values.filter((v) => v.lockWait === null)).toHaveLength(2);
    const svg = await renderSvg(horizonChartSpec(r));
    expect(svg).toMatch(/^<svg/);
    expect(svg).toContain('graphile-batched');
  });
});
