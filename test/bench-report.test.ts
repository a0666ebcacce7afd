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
