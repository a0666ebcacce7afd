// `npm run bench [-- --quick] [-- --json]`: stampede beside graphile-worker and
// pg-boss on one Postgres, plus the raw-SQL limit and the scale workload.
// The bench reports; it does not pass or fail (exit 0 unless it could not run).
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../engine/clock.ts';
import { createLogger } from '../engine/log.ts';
import { provisionPostgres } from '../harness/postgres/provision.ts';
import { BenchContext } from './context.ts';
import { parseBenchArgs, UsageError, type BenchPlan } from './options.ts';
import { CHILD_SCRIPT, wallMs } from './proc.ts';
import { renderMarkdown, renderTable, summarize, type BenchResults, type Machine, type RoundResults } from './report.ts';
import { checkTargets, drainKey } from './targets.ts';
import { once } from './systems/util.ts';
import { configById, FAMILIES, WITHOUT_INDEX_CONFIG } from './systems/configs.ts';
import { runDrain } from './workloads/drain.ts';
import { runEnqueueOne } from './workloads/enqueue.ts';
import { runLatency } from './workloads/latency.ts';
import { runRawLimit, type RawLimitResult } from './workloads/raw-limit.ts';
import { runScale, type ScaleResult } from './workloads/scale.ts';
import { runArchive, type ArchiveResult } from './workloads/archive.ts';
import { renderIndexCostTable, renderSamplerTable, runSampler, type SamplerResult } from './workloads/sampler.ts';
import { runHorizon, type HorizonResult } from './workloads/horizon.ts';
import { renderHorizonSummary, writeHorizonDocs } from './horizon-report.ts';

const log = createLogger('bench');

/** Rotates the order each round, so no system always runs first (cold caches) or last (a warmed server). */
export function rotate<T>(xs: readonly T[], by: number): T[] {
  if (xs.length === 0) return [];
  const k = by % xs.length;
  return [...xs.slice(k), ...xs.slice(0, k)];
}

async function runRound(ctx: BenchContext, plan: BenchPlan, round: number): Promise<RoundResults> {
  const r: RoundResults = { enqueue: {}, drain: {}, latency: {} };
  if (!plan.skip.has('enqueue')) {
    for (const id of rotate(plan.enqueueConfigs, round)) {
      r.enqueue[id] = await runEnqueueOne(ctx, configById(id), plan.enqueueJobs, plan.enqueueConcurrency, plan.enqueueBudgetMs);
      log.info('enqueue', { round, config: id, jobsPerSec: Math.round(r.enqueue[id].oneJobsPerSec) });
    }
  }
  if (!plan.skip.has('drain')) {
    for (const size of plan.drainSizes) {
      for (const procs of plan.drainProcs) {
        for (const id of rotate(plan.drainConfigs, round)) {
          const d = await runDrain(ctx, configById(id), size.jobs, procs, size.budgetMs);
          r.drain[drainKey(id, procs, size.jobs)] = d;
          log.info('drain', { round, config: id, procs, jobs: size.jobs, jobsPerSec: Math.round(d.drainJobsPerSec), drained: d.drained, peakRssMiB: d.peakRssMiB?.toFixed(0) });
        }
      }
    }
  }
  if (!plan.skip.has('latency')) {
    for (const id of rotate(plan.latencyConfigs, round)) {
      const l = await runLatency(ctx, configById(id), plan.latencyRatePerSec, plan.latencySeconds, plan.latencyWarmupSeconds);
      r.latency[id] = l;
      log.info('latency', { round, config: id, p50: l.p50.toFixed(1), p99: l.p99.toFixed(1), max: l.max.toFixed(1), warmupMax: l.warmupMax.toFixed(1), achievedPerSec: Math.round(l.achievedPerSec), shed: l.shed, peakRssMiB: l.peakRssMiB?.toFixed(0) });
    }
  }
  return r;
}

async function machine(adminUrl: string, server: string): Promise<Machine> {
  const [{ server_version: version }] = await once<{ server_version: string }>(adminUrl, 'SHOW server_version');
  const settings = await once<{ name: string; setting: string }>(adminUrl, "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit')");
  for (const s of settings) if (s.setting !== 'on') log.warn(`${s.name} is ${s.setting}: figures are not durable-commit figures`);
  return {
    cores: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memGiB: Math.round(totalmem() / 2 ** 30),
    node: process.versions.node,
    postgres: `PostgreSQL ${version}`,
    server,
    versions: Object.fromEntries(Object.values(FAMILIES).map((f) => [f.name, f.version()])),
    // The machine may be shared (CI neighbours, other test suites): a high load average explains noisy figures.
    loadAverage1m: loadavg()[0],
    workerChild: `node ${process.version} ${relative(process.cwd(), CHILD_SCRIPT)} (no execArgv, no NODE_OPTIONS; checked on every child)`,
  };
}

function command(): string {
  return `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
}

async function main(): Promise<void> {
  const plan = parseBenchArgs(process.argv.slice(2));
  const started = wallMs();
  // Durability defaults: nothing here turns fsync or synchronous_commit off.
  const server = await provisionPostgres({ log: log.child('postgres') });
  const ctx = new BenchContext(server.adminUrl, log);
  let results: BenchResults;
  try {
    const m = await machine(server.adminUrl, server.kind);
    log.info('bench starting', { preset: plan.preset, rounds: plan.rounds, cores: m.cores, postgres: m.postgres });
    let raw: RawLimitResult | null = null;
    if (!plan.skip.has('raw')) {
      raw = await runRawLimit(ctx, plan.rawInserts, plan.rawClaimJobs, plan.rawClients, plan.rawBudgetMs);
      log.info('physical limit', { insert1: Math.round(raw.insert1PerSec), insert16: Math.round(raw.insert16PerSec), claimDone: Math.round(raw.claimDonePerSec) });
    }
    const rounds: RoundResults[] = [];
    for (let round = 0; round < plan.rounds; round++) rounds.push(await runRound(ctx, plan, round));
    let scale: ScaleResult | null = null;
    if (!plan.skip.has('scale')) scale = await runScale(ctx, plan.scaleSizes, plan.claimBenchMs);
    let archive: ArchiveResult | null = null;
    if (!plan.skip.has('archive')) {
      archive = await runArchive(ctx, plan.archiveRows);
      log.info('archive', { movedPerSec: Math.round(archive.movedPerSec), walBytesPerRow: Math.round(archive.walBytesPerRow), dropPartitionMs: archive.dropPartitionMs.toFixed(1) });
    }
    let sampler: SamplerResult | null = null;
    if (!plan.skip.has('sampler')) sampler = await runSampler(ctx, plan.samplerSizes, plan.samplerQueues, plan.samplerDoneRows, plan.samplerRounds);
    let horizon: HorizonResult | null = null;
    if (!plan.skip.has('horizon')) {
      const shape = { ratePerSec: plan.horizonRatePerSec, batchMs: plan.horizonBatchMs, minutes: plan.horizonMinutes, readers: plan.horizonReaders, readerHoldS: plan.horizonReaderHoldS };
      // Written after each config: a 50-minute run that is stopped still leaves its finished configs in docs/.
      const date = new Date(systemClock.now()).toISOString();
      horizon = await runHorizon(ctx, plan.horizonConfigs, shape, (r) => (plan.writeDocs ? writeHorizonDocs({ machine: m, command: command(), date, horizon: r }, loadavg()[0]) : undefined));
    }
    const medians = summarize(rounds);
    results = {
      date: new Date(systemClock.now()).toISOString(),
      command: command(),
      machine: m,
      plan: { ...plan, skip: [...plan.skip] },
      rounds,
      raw,
      scale,
      archive,
      sampler,
      horizon,
      medians,
      targets: checkTargets(plan.targetIssues, medians, scale),
      loadAverage1mAtEnd: loadavg()[0],
      durationSeconds: (wallMs() - started) / 1000,
    };
  } finally {
    await ctx.cleanup();
    await server.stop();
  }
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const partial = process.argv.slice(2).some((a) => ['--only', '--skip', '--rounds', '--jobs', '--latency-seconds', '--latency-rate', '--minutes', '--readers', '--horizon-configs'].includes(a));
  const suffix = `${plan.preset === 'full' ? '' : `-${plan.preset}`}${partial ? '-partial' : ''}`;
  const file = `${dir}${results.date.replace(/[:.]/g, '-')}${suffix}.json`;
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
  if (plan.writeDocs && plan.preset !== 'horizon') {
    writeFileSync(fileURLToPath(new URL('../docs/benchmark.md', import.meta.url)), renderMarkdown(results));
  }
  if (plan.json) {
    process.stdout.write(JSON.stringify(results) + '\n');
  } else {
    process.stdout.write(renderTable(results) + '\n');
    if (plan.drainConfigs.includes(WITHOUT_INDEX_CONFIG) || plan.enqueueConfigs.includes(WITHOUT_INDEX_CONFIG)) {
      process.stdout.write(`\nwhat the round's index costs the write path (medians of ${plan.rounds} rounds):\n${renderIndexCostTable(results.medians, plan.drainSizes.flatMap((s) => plan.drainProcs.map((procs) => ({ jobs: s.jobs, procs }))))}\n`);
    }
    if (results.sampler) process.stdout.write(`\nqueue-state round (${results.sampler.rounds} rounds each, budget ${results.sampler.roundRowBudget} rows, ${results.sampler.doneRows} done rows):\n${renderSamplerTable(results.sampler)}\n`);
    if (results.horizon) process.stdout.write(`\nheld horizon (${results.horizon.minutes} min each):\n${renderHorizonSummary(results.horizon)}\n`);
    if (results.scale) process.stdout.write(`\nclaim plan at ${results.scale.points.at(-1)?.finishedRows} finished rows:\n${results.scale.explain}\n`);
    // The preset's promise is a time (issue 15: under 15 minutes): say what this run took.
    const took = Math.round(results.durationSeconds);
    process.stdout.write(`\nresults: ${file} (the run took ${Math.floor(took / 60)} min ${took % 60} s)\n`);
  }
}

main().catch((err) => {
  process.stderr.write(err instanceof UsageError ? `${err.message}\n` : `bench failed: ${(err as Error).stack ?? err}\n`);
  process.exit(err instanceof UsageError ? 2 : 1);
});
