import { describe, expect, it } from 'vitest';
import { parseBenchArgs, UsageError } from '../bench/options.ts';
import { configById } from '../bench/systems/configs.ts';

describe('parseBenchArgs', () => {
  it('runs the full plan with no flags: 20,000-job drains, issue 10 and 15 targets, graphile-worker at concurrency 10 in the latency rows', () => {
    const plan = parseBenchArgs([]);
    expect(plan.preset).toBe('full');
    expect(plan.rounds).toBe(3);
    expect(plan.drainSizes).toEqual([{ jobs: 20_000, budgetMs: 8_000 }]);
    expect(plan.targetIssues).toEqual([10, 15]);
    expect(plan.latencyConfigs).toContain('graphile-c10');
    expect(plan.writeDocs).toBe(true);
  });

  it('--preset issue15 runs exactly the rows issue 15 judges', () => {
    const plan = parseBenchArgs(['--preset', 'issue15']);
    expect(plan.preset).toBe('issue15');
    expect(plan.rounds).toBe(5);
    expect(plan.latencyWarmupSeconds).toBe(1);
    expect(plan.drainSizes.map((s) => s.jobs)).toEqual([20_000, 100_000]);
    expect(plan.drainProcs).toEqual([1, 2]);
    expect(plan.drainConfigs).toEqual(['stampede', 'stampede-c500', 'graphile-batched']);
    expect(plan.latencyRatePerSec).toBe(500);
    expect(plan.latencyConfigs).toEqual(['stampede', 'graphile-c10', 'pgboss-batch', 'pgboss-batch-notify']);
    expect([...plan.skip].sort()).toEqual(['archive', 'enqueue', 'horizon', 'sampler', 'scale']);
    expect(plan.targetIssues).toEqual([15]);
    expect(plan.writeDocs).toBe(false);
  });

  it("--preset issue15's latency rows hold a peer at stampede's default concurrency", () => {
    const plan = parseBenchArgs(['--preset', 'issue15']);
    const ours = configById('stampede').concurrency;
    expect(plan.latencyConfigs.filter((id) => configById(id).family !== 'stampede' && configById(id).concurrency === ours)).toEqual(['graphile-c10']);
  });

  it('applies the other flags on top of the preset wherever the preset stands', () => {
    const plan = parseBenchArgs(['--rounds', '1', '--no-docs', '--preset', 'issue15', '--only', 'stampede,graphile-batched']);
    expect(plan.rounds).toBe(1);
    expect(plan.drainSizes).toHaveLength(2);
    expect(plan.drainConfigs).toEqual(['stampede', 'graphile-batched']);
    expect(plan.latencyConfigs).toEqual(['stampede']);
  });

  it('--quick is the small smoke plan; --jobs sets one drain size and keeps its budget', () => {
    expect(parseBenchArgs(['--quick']).preset).toBe('quick');
    expect(parseBenchArgs(['--quick']).drainSizes).toEqual([{ jobs: 1_000, budgetMs: 3_000 }]);
    expect(parseBenchArgs(['--jobs', '500']).drainSizes).toEqual([{ jobs: 500, budgetMs: 8_000 }]);
    expect(parseBenchArgs(['--preset', 'full']).preset).toBe('full');
  });

  it('names only configs that exist, in every preset', () => {
    for (const argv of [[], ['--quick'], ['--preset', 'issue15']]) {
      const plan = parseBenchArgs(argv);
      for (const id of [...plan.enqueueConfigs, ...plan.drainConfigs, ...plan.latencyConfigs]) expect(() => configById(id)).not.toThrow();
    }
  });

  it('--preset sampler runs the queue-state round workload, and enqueue and drains beside the schema without its index; --sampler-sizes sets its backlogs', () => {
    const plan = parseBenchArgs(['--preset', 'sampler', '--sampler-sizes', '500000,2000000']);
    expect([...plan.skip].sort()).toEqual(['archive', 'horizon', 'latency', 'raw', 'scale']);
    expect(plan).toMatchObject({ rounds: 5, enqueueConfigs: ['stampede', 'stampede-without-0020'], drainConfigs: ['stampede', 'stampede-without-0020'] });
    expect(configById('stampede-without-0020').settings).toEqual({ dropIndexes: ['jobs_oldest_idx'] });
    // A schema baseline runs only where a preset puts it, never in the full run.
    expect(parseBenchArgs([]).drainConfigs).not.toContain('stampede-without-0020');
    expect(parseBenchArgs(['--preset', 'sampler', '--only', 'stampede-without-0020']).drainConfigs).toEqual(['stampede-without-0020']);
    expect(plan).toMatchObject({ samplerSizes: [500_000, 2_000_000], samplerQueues: [20, 200], samplerRounds: 5, targetIssues: [] });
    expect(parseBenchArgs([]).skip.has('sampler')).toBe(true);
    expect(() => parseBenchArgs(['--sampler-sizes', '500000,x'])).toThrow(/--sampler-sizes: expected an integer >= 2000, got "x"/);
  });

  it('--preset horizon runs the held-horizon profile only, for stampede and both peers; --minutes shortens it, --horizon-configs picks configs', () => {
    const plan = parseBenchArgs(['--preset', 'horizon']);
    expect([...plan.skip].sort()).toEqual(['archive', 'drain', 'enqueue', 'latency', 'raw', 'sampler', 'scale']);
    expect(plan).toMatchObject({ horizonRatePerSec: 800, horizonMinutes: 15, horizonReaders: 3, horizonReaderHoldS: 120, writeDocs: true });
    expect(plan.horizonConfigs).toEqual(['stampede', 'graphile-batched', 'pgboss-batch-notify']);
    expect(parseBenchArgs(['--preset', 'horizon', '--minutes', '2', '--horizon-configs', 'stampede,stampede-archiver'])).toMatchObject({
      horizonMinutes: 2,
      horizonConfigs: ['stampede', 'stampede-archiver'],
    });
    expect(parseBenchArgs(['--preset', 'horizon', '--readers', '0']).horizonReaders).toBe(0);
    expect(parseBenchArgs([]).skip.has('horizon')).toBe(true);
    expect(() => parseBenchArgs(['--minutes', '0'])).toThrow(/--minutes: expected an integer >= 1, got "0"/);
    expect(() => parseBenchArgs(['--horizon-configs', 'stampede,oracle'])).toThrow(/--horizon-configs: unknown config "oracle"; expected some of stampede, /);
  });

  it('rejects an unknown or missing preset, two presets, and bad numbers, naming the flag and what it expects', () => {
    expect(() => parseBenchArgs(['--preset', 'fast'])).toThrow(UsageError);
    expect(() => parseBenchArgs(['--preset', 'fast'])).toThrow(/--preset: unknown preset "fast"; expected one of full, quick, issue15/);
    expect(() => parseBenchArgs(['--preset'])).toThrow(/--preset: unknown preset ""/);
    expect(() => parseBenchArgs(['--quick', '--preset', 'issue15'])).toThrow(/one preset at a time; got quick and issue15/);
    expect(() => parseBenchArgs(['--rounds', '0'])).toThrow(/--rounds: expected an integer >= 1, got "0"/);
    expect(() => parseBenchArgs(['--only', 'graphile'])).toThrow(/--only: unknown config "graphile"/);
    expect(() => parseBenchArgs(['--fast'])).toThrow(/unknown flag "--fast"; usage: npm run bench -- \[--quick \| --preset full\|quick\|issue15\|sampler\|horizon\]/);
  });
});
