import { describe, expect, it } from 'vitest';
import type { Medians } from '../bench/report.ts';
import { checkIssue15Targets, drainKey, parseDrainKey } from '../bench/targets.ts';

const drain = (drainJobsPerSec: number, peakRssMiB: number) => ({ drainJobsPerSec, peakRssMiB, drained: 0 });
// A warm-up max over 50 ms in every row: the max target judges the measured window only.
const lat = (p99: number, max: number, peakRssMiB: number) => ({ p50: p99 / 2, p95: p99, p99, max, warmupMax: 80, achievedPerSec: 500, shed: 0, peakRssMiB });

/** Four drain rows and a latency row, stampede at `factor` x graphile-batched in every drain row. */
function medians(factor: number, ourP99: number, ourRss: number): Medians {
  const m: Medians = { enqueueOne: {}, enqueueBatch: {}, drain: {}, latency: {} };
  for (const jobs of [20_000, 100_000]) {
    for (const procs of [1, 2]) {
      m.drain[drainKey('graphile-batched', procs, jobs)] = drain(10_000, 100);
      m.drain[drainKey('stampede', procs, jobs)] = drain(10_000 * factor * 0.5, 80);
      m.drain[drainKey('stampede-c500', procs, jobs)] = drain(10_000 * factor, ourRss);
    }
  }
  m.latency.stampede = lat(ourP99, 40, 80);
  m.latency['graphile-c10'] = lat(20, 30, 95);
  m.latency['pgboss-batch'] = lat(5, 10, 90);
  return m;
}

describe('checkIssue15Targets', () => {
  it('meets every target when stampede is 1.2x in each drain row, at or under the peer at concurrency 10 and the leanest RSS', () => {
    const v = checkIssue15Targets(medians(1.3, 18, 90));
    expect(v.map((t) => [t.name, t.met])).toEqual([
      ['drain 20,000 jobs, 1 process: stampede >= 1.2x graphile-batched', true],
      ['drain 20,000 jobs, 2 processes: stampede >= 1.2x graphile-batched', true],
      ['drain 100,000 jobs, 1 process: stampede >= 1.2x graphile-batched', true],
      ['drain 100,000 jobs, 2 processes: stampede >= 1.2x graphile-batched', true],
      ['latency p99 <= best peer at concurrency 10', true],
      ['latency max <= 50 ms', true],
      ['worker peak RSS <= the leanest peer (worst row)', true],
    ]);
    // pg-boss batch 50 holds 50 jobs at once: not the equal-concurrency reference, but named beside it.
    expect(v[4].note).toBe('graphile-c10; best peer at any setting: pgboss-batch, p99 5.0 ms');
  });

  it('misses each drain row, the latency and the RSS by how much (negative control)', () => {
    const v = checkIssue15Targets(medians(0.6, 30, 120));
    expect(v.slice(0, 4).every((t) => t.met === false && Math.abs(t.shortfall! - 0.5) < 1e-9)).toBe(true);
    expect(v[0].note).toBe('stampede-c500; graphile-batched 10,000 jobs/s');
    expect(v[4]).toMatchObject({ met: false, measured: 30, target: 20 });
    expect(v[6]).toMatchObject({ met: false, measured: 120, target: 100, note: 'drain 20k x1: stampede-c500 vs graphile-batched' });
  });

  it('says not measured when a row has no peer, never met', () => {
    const m = medians(2, 10, 50);
    for (const key of Object.keys(m.drain)) if (key.startsWith('graphile')) delete m.drain[key];
    delete m.latency['graphile-c10'];
    const v = checkIssue15Targets(m);
    expect(v.slice(0, 4).every((t) => t.met === null)).toBe(true);
    expect(v[4]).toMatchObject({ met: null, note: 'no peer at concurrency 10 ran' });
  });

  it('drain keys round-trip and a malformed one is named', () => {
    expect(parseDrainKey(drainKey('stampede-c500', 2, 100_000))).toEqual({ id: 'stampede-c500', procs: 2, jobs: 100_000 });
    expect(() => parseDrainKey('stampede@2')).toThrow(/drain key "stampede@2": expected <config>@<procs>\/<jobs>/);
  });
});
