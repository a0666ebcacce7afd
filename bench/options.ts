import { CONFIGS } from './systems/configs.ts';

/** Everything a bench run does, as data: sizes, rounds, which configs run which workload. */
export interface BenchPlan {
  quick: boolean;
  json: boolean;
  /** Write docs/benchmark.md from this run. Default: full runs only. */
  writeDocs: boolean;
  rounds: number;
  enqueueJobs: number;
  enqueueConcurrency: number;
  /** Enqueue stops here even if `enqueueJobs` are not all in (a slow disk must not make the bench unbounded). */
  enqueueBudgetMs: number;
  /** One config per library for enqueue: the producer side does not depend on worker settings. */
  enqueueConfigs: string[];
  drainJobs: number;
  drainProcs: number[];
  drainConfigs: string[];
  /** A drain's clock stops here even if jobs remain; the rate is over what committed. */
  drainBudgetMs: number;
  latencyRatePerSec: number;
  latencySeconds: number;
  latencyConfigs: string[];
  scaleSizes: number[];
  claimBenchMs: number;
  rawInserts: number;
  rawClaimJobs: number;
  rawClients: number;
  /** Each raw INSERT measurement stops here (the rate is over what committed). */
  rawBudgetMs: number;
  /** Done rows the archive workload generates and moves to history. */
  archiveRows: number;
  skip: Set<'enqueue' | 'drain' | 'latency' | 'scale' | 'raw' | 'archive'>;
}

const ALL = CONFIGS.map((c) => c.id);
const ENQUEUE = ['stampede', 'graphile-default', 'pgboss-batch-notify'];
// The peer latency references: graphile-worker (LISTEN) and pg-boss batchSize 50 with and without NOTIFY.
const LATENCY = ['stampede', 'graphile-default', 'pgboss-batch', 'pgboss-batch-notify'];
const WORKLOADS = ['enqueue', 'drain', 'latency', 'scale', 'raw', 'archive'] as const;

export function fullPlan(): BenchPlan {
  return {
    quick: false,
    json: false,
    writeDocs: true,
    rounds: 3,
    enqueueJobs: 20_000,
    enqueueConcurrency: 10,
    enqueueBudgetMs: 6_000,
    enqueueConfigs: ENQUEUE,
    drainJobs: 20_000,
    drainProcs: [1, 2],
    drainConfigs: ALL,
    drainBudgetMs: 8_000,
    latencyRatePerSec: 500,
    latencySeconds: 30,
    latencyConfigs: LATENCY,
    scaleSizes: [0, 1_000_000, 10_000_000],
    claimBenchMs: 1_500,
    rawInserts: 20_000,
    rawClaimJobs: 100_000,
    rawClients: 4,
    rawBudgetMs: 8_000,
    archiveRows: 500_000,
    skip: new Set(),
  };
}

/** The smoke version: every workload and every library, small, one round, under a minute. */
export function quickPlan(): BenchPlan {
  return {
    ...fullPlan(),
    quick: true,
    writeDocs: false,
    rounds: 1,
    enqueueJobs: 1_000,
    enqueueBudgetMs: 1_500,
    drainJobs: 1_000,
    drainProcs: [1],
    drainConfigs: ['stampede', 'graphile-batched', 'pgboss-batch-notify'],
    drainBudgetMs: 3_000,
    latencyRatePerSec: 100,
    latencySeconds: 2,
    latencyConfigs: ['stampede', 'graphile-default', 'pgboss-batch-notify'],
    scaleSizes: [0, 100_000, 1_000_000],
    claimBenchMs: 200,
    rawInserts: 400,
    rawBudgetMs: 1_000,
    archiveRows: 20_000,
    rawClaimJobs: 10_000,
  };
}

export class UsageError extends Error {}

function int(flag: string, value: string | undefined, min: number): number {
  const n = Number(value);
  if (value === undefined || !Number.isInteger(n) || n < min) throw new UsageError(`${flag}: expected an integer >= ${min}, got "${value ?? ''}"`);
  return n;
}

/** Parses `npm run bench -- [flags]` into a plan. Pure. */
export function parseBenchArgs(argv: readonly string[]): BenchPlan {
  const plan = argv.includes('--quick') ? quickPlan() : fullPlan();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    switch (a) {
      case '--quick':
        break;
      case '--json':
        plan.json = true;
        break;
      case '--docs':
        plan.writeDocs = true;
        break;
      case '--no-docs':
        plan.writeDocs = false;
        break;
      case '--rounds':
        plan.rounds = int(a, argv[++i], 1);
        break;
      case '--jobs':
        plan.enqueueJobs = plan.drainJobs = int(a, argv[++i], 10);
        break;
      case '--latency-seconds':
        plan.latencySeconds = int(a, argv[++i], 1);
        break;
      case '--latency-rate':
        plan.latencyRatePerSec = int(a, argv[++i], 1);
        break;
      case '--only': {
        const ids = (argv[++i] ?? '').split(',').filter(Boolean);
        const unknown = ids.filter((id) => !ALL.includes(id));
        if (ids.length === 0 || unknown.length) throw new UsageError(`--only: unknown config "${unknown.join(',')}"; expected some of ${ALL.join(', ')}`);
        plan.enqueueConfigs = plan.enqueueConfigs.filter((c) => ids.includes(c));
        plan.drainConfigs = plan.drainConfigs.filter((c) => ids.includes(c));
        plan.latencyConfigs = plan.latencyConfigs.filter((c) => ids.includes(c));
        break;
      }
      case '--skip': {
        for (const w of (argv[++i] ?? '').split(',')) {
          if (!(WORKLOADS as readonly string[]).includes(w)) throw new UsageError(`--skip: unknown workload "${w}"; expected some of ${WORKLOADS.join(', ')}`);
          plan.skip.add(w as (typeof WORKLOADS)[number]);
        }
        break;
      }
      default:
        throw new UsageError(
          `unknown flag "${a}"; usage: npm run bench -- [--quick] [--json] [--rounds N] [--jobs N] [--latency-seconds N] [--latency-rate N] [--only ids] [--skip ${WORKLOADS.join(',')}] [--docs|--no-docs]`,
        );
    }
  }
  return plan;
}
