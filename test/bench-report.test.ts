import { describe, expect, it } from 'vitest';
import { issue15Plan } from '../bench/options.ts';
import { summarize, tableRows, type BenchResults, type RoundResults } from '../bench/report.ts';
import { checkTargets, drainKey } from '../bench/targets.ts';

const drain = (jobs: number, drained: number, drainJobsPerSec: number, peakRssMiB: number) => ({ batchJobsPerSec: 10_000, drainJobsPerSec, peakRssMiB, jobs, drained });

/** One round of the issue 15 preset's drains at 20,000 jobs, 1 process, and nothing else. */
function results(): BenchResults {
  const round: RoundResults = {
    enqueue: {},
    latency: {},
    drain: {
      [drainKey('stampede', 1, 20_000)]: drain(20_000, 5_000, 625, 90),
      [drainKey('stampede-c500', 1, 20_000)]: drain(20_000, 20_000, 4_000, 120),
      [drainKey('graphile-batched', 1, 20_000)]: drain(20_000, 20_000, 10_000, 110),
    },
  };
  const plan = issue15Plan();
  const medians = summarize([round]);
  return {
    date: '2026-12-01T00:00:00.000Z',
    command: 'npm run bench -- --preset issue15',
    machine: { cores: 2, cpuModel: 'x', memGiB: 1, node: '20', postgres: 'PostgreSQL 18', server: 'embedded', versions: {}, loadAverage1m: 0, workerChild: 'node' },
    plan: { ...plan, skip: [...plan.skip] },
    rounds: [round],
    raw: { insert1PerSec: 1, insert16PerSec: 1, insertNotify16PerSec: 1, claimDonePerSec: 16_000, claimThenDonePerSec: 8_000, doneWithNextClaimPerSec: 9_000, clients: 4 },
    scale: null,
    archive: null,
    medians,
    targets: checkTargets(plan.targetIssues, medians, null),
    durationSeconds: 1,
    loadAverage1mAtEnd: 0,
  };
}

describe('the latency rows of the results table', () => {
  const latency = (max: number, warmupMax: number) => ({ n: 7_500, p50: 3, p95: 8, p99: 12, max, warmupMax, offeredPerSec: 500, achievedPerSec: 500, shed: 0, peakRssMiB: 90 });
  const withLatency = (warmupMax: number | undefined) => {
    const r = results();
    r.rounds = [{ enqueue: {}, drain: {}, latency: { stampede: latency(31, warmupMax as number), 'graphile-c10': latency(60, 90) } }];
    r.medians = summarize(r.rounds);
    return tableRows(r).filter((row) => row.workload.startsWith('due-to-start max'));
  };

  it('keep the warm-up apart: the max row is the measured window, the warm-up its own row', () => {
    expect(withLatency(64).map((row) => [row.workload, row.config.split(' ')[0], row.value, row.ratio])).toEqual([
      ['due-to-start max at 500/s', 'stampede', '31.0 ms', ''],
      ['due-to-start max at 500/s', 'graphile-c10', '60.0 ms', '0.52x'],
      ['due-to-start max of the first 1 s (warm-up, not in the rows above)', 'stampede', '64.0 ms', ''],
      ['due-to-start max of the first 1 s (warm-up, not in the rows above)', 'graphile-c10', '90.0 ms', '0.71x'],
    ]);
  });

  it('show no warm-up row for a run recorded before there was one', () => {
    const r = results();
    r.rounds = [{ enqueue: {}, drain: {}, latency: { stampede: { ...latency(31, 0), warmupMax: undefined as unknown as number } } }];
    r.medians = summarize(r.rounds);
    expect(tableRows(r).map((row) => row.workload).filter((w) => w.startsWith('due-to-start max'))).toEqual(['due-to-start max at 500/s']);
  });
});

describe('the drain rows of the results table', () => {
  const rows = tableRows(results()).filter((r) => r.workload === 'drain 20,000 jobs, 1 process');

  it("give stampede's share of the raw two-commit limit in its own last cell, and the peer's ratio in the peer's", () => {
    expect(rows.map((r) => [r.config.split(' ')[0], r.value, r.ratio])).toEqual([
      ['stampede', '625 jobs/s (budget cut it: 5,000 of 20,000 drained)', '0.08 of raw limit'],
      ['stampede-c500', '4,000 jobs/s', '0.50 of raw limit'],
      ['graphile-batched', '10,000 jobs/s', '0.40x'],
    ]);
  });

  it("judge issue 15's drain row against graphile-worker batched", () => {
    const [first] = results().targets[0].verdicts;
    expect(first).toMatchObject({ name: 'drain 20,000 jobs, 1 process: stampede >= 1.2x graphile-batched', measured: 4_000, target: 12_000, met: false });
  });
});
