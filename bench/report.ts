import type { BenchPlan } from './options.ts';
import { best, median, medianOf, type TargetVerdict } from './stats.ts';
import { drainKey, fmtRows, parseDrainKey, type TargetSection } from './targets.ts';
import { CONFIGS, configById } from './systems/configs.ts';
import type { DrainResult } from './workloads/drain.ts';
import type { EnqueueResult } from './workloads/enqueue.ts';
import type { LatencyResult } from './workloads/latency.ts';
import type { RawLimitResult } from './workloads/raw-limit.ts';
import type { ScaleResult } from './workloads/scale.ts';
import type { SamplerResult } from './workloads/sampler.ts';
import type { HorizonResult } from './workloads/horizon.ts';
import type { ArchiveResult } from './workloads/archive.ts';

export interface RoundResults {
  enqueue: Record<string, EnqueueResult>;
  /** Keyed `configId@procs/jobs` (drainKey). */
  drain: Record<string, DrainResult>;
  latency: Record<string, LatencyResult>;
}

export interface Machine {
  cores: number;
  cpuModel: string;
  memGiB: number;
  node: string;
  postgres: string;
  server: string;
  versions: Record<string, string>;
  loadAverage1m: number;
  /** How every system's worker child ran (each child reports it and the bench refuses one under a loader). */
  workerChild: string;
}

export interface Medians {
  enqueueOne: Record<string, number | null>;
  enqueueBatch: Record<string, number | null>;
  drain: Record<string, { drainJobsPerSec: number | null; peakRssMiB: number | null; drained: number | null }>;
  latency: Record<
    string,
    {
      p50: number | null;
      p95: number | null;
      p99: number | null;
      max: number | null;
      warmupMax: number | null;
      achievedPerSec: number | null;
      shed: number | null;
      peakRssMiB: number | null;
    }
  >;
}

export interface BenchResults {
  date: string;
  command: string;
  machine: Machine;
  plan: Omit<BenchPlan, 'skip'> & { skip: string[] };
  rounds: RoundResults[];
  raw: RawLimitResult | null;
  scale: ScaleResult | null;
  /** The queue-state round, old against new (`--preset sampler`); absent from runs before issue 47. */
  sampler?: SamplerResult | null;
  /** The held-horizon profile (`--preset horizon`, issue 42); absent from runs before it. */
  horizon?: HorizonResult | null;
  archive: ArchiveResult | null;
  medians: Medians;
  targets: TargetSection[];
  durationSeconds: number;
  loadAverage1mAtEnd: number;
}

const isStampede = (id: string) => configById(id).family === 'stampede';

/** Medians over rounds of every per-config figure. Pure. */
export function summarize(rounds: RoundResults[]): Medians {
  const ids = (pick: (r: RoundResults) => Record<string, unknown>) => [...new Set(rounds.flatMap((r) => Object.keys(pick(r))))];
  const m: Medians = { enqueueOne: {}, enqueueBatch: {}, drain: {}, latency: {} };
  for (const id of ids((r) => r.enqueue)) {
    m.enqueueOne[id] = medianOf(rounds.filter((r) => r.enqueue[id]).map((r) => ({ v: r.enqueue[id].oneJobsPerSec }))).v;
  }
  for (const key of ids((r) => r.drain)) {
    const rs = rounds.filter((r) => r.drain[key]).map((r) => r.drain[key]);
    m.drain[key] = medianOf(rs.map((d) => ({ drainJobsPerSec: d.drainJobsPerSec, peakRssMiB: d.peakRssMiB, drained: d.drained })));
  }
  // Bulk enqueue is timed while loading every drain; all of a config's drains count.
  for (const id of new Set(ids((r) => r.drain).map((k) => parseDrainKey(k).id))) {
    const vals = rounds.flatMap((r) => Object.entries(r.drain).filter(([k]) => parseDrainKey(k).id === id).map(([, d]) => d.batchJobsPerSec));
    m.enqueueBatch[id] = vals.length ? median(vals) : null;
  }
  for (const id of ids((r) => r.latency)) {
    const rs = rounds.filter((r) => r.latency[id]).map((r) => r.latency[id]);
    m.latency[id] = medianOf(rs.map((l) => ({ p50: l.p50, p95: l.p95, p99: l.p99, max: l.max, warmupMax: l.warmupMax ?? null, achievedPerSec: l.achievedPerSec, shed: l.shed, peakRssMiB: l.peakRssMiB ?? null })));
  }
  return m;
}

const fmt = (v: number | null | undefined, digits = 0) =>
  v === null || v === undefined || !Number.isFinite(v) ? '—' : v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const ratio = (ours: number | null | undefined, theirs: number | null | undefined) =>
  ours && theirs && Number.isFinite(ours) && Number.isFinite(theirs) ? `${(ours / theirs).toFixed(2)}x` : '—';

interface Row {
  workload: string;
  config: string;
  value: string;
  ratio: string;
}

/** The rows of the results table: one per workload and config, with stampede's best / the peer's figure. */
export function tableRows(r: BenchResults): Row[] {
  const m = r.medians;
  const rows: Row[] = [];
  const label = (id: string) => `${id} (${configById(id).label})`;
  // `ourCell` fills stampede's own last cell (its share of the raw limit on drain rows); `note` follows a value.
  const section = (
    workload: string,
    values: Record<string, number | null>,
    unit: string,
    digits: number,
    better: 'max' | 'min',
    ourRef?: number | null,
    extra: { ourCell?: (id: string) => string; note?: (id: string) => string } = {},
  ) => {
    const ours = ourRef ?? best(Object.entries(values).filter(([k]) => isStampede(k)), better)?.[1];
    for (const id of CONFIGS.map((c) => c.id).filter((c) => c in values)) {
      rows.push({
        workload,
        config: label(id),
        value: `${fmt(values[id], digits)} ${unit}${extra.note?.(id) ?? ''}`,
        ratio: isStampede(id) ? (extra.ourCell?.(id) ?? '') : ratio(ours, values[id]),
      });
    }
  };
  section(`enqueue, one INSERT each (${r.plan.enqueueConcurrency} at once)`, m.enqueueOne, 'jobs/s', 0, 'max');
  // Timed while loading each drain: one bulk call of each drain size.
  section(`enqueue, one batch of ${r.plan.drainSizes.map((d) => fmt(d.jobs)).join(' or ')}`, m.enqueueBatch, 'jobs/s', 0, 'max');
  const limit = r.raw?.claimThenDonePerSec;
  for (const { jobs } of r.plan.drainSizes) {
    for (const p of r.plan.drainProcs) {
      const here = CONFIGS.map((c) => [c.id, m.drain[drainKey(c.id, p, jobs)]] as const).filter(([, v]) => v !== undefined);
      const procs = `${p} process${p > 1 ? 'es' : ''}`;
      // A drain cut short by its budget says so: its rate is over what committed in time.
      const cut = (id: string) => {
        const d = m.drain[drainKey(id, p, jobs)]?.drained;
        return d !== null && d !== undefined && d < jobs ? ` (budget cut it: ${fmt(d)} of ${fmt(jobs)} drained)` : '';
      };
      const share = (id: string) => (limit ? `${(m.drain[drainKey(id, p, jobs)].drainJobsPerSec! / limit).toFixed(2)} of raw limit` : '');
      section(`drain ${fmt(jobs)} jobs, ${procs}`, Object.fromEntries(here.map(([id, v]) => [id, v.drainJobsPerSec])), 'jobs/s', 0, 'max', undefined, { ourCell: share, note: cut });
      section(`worker peak RSS, drain ${fmt(jobs)}, ${procs}`, Object.fromEntries(here.map(([id, v]) => [id, v.peakRssMiB])), 'MiB', 0, 'max');
    }
  }
  const lat = m.latency;
  section(`enqueues committed of ${r.plan.latencyRatePerSec}/s offered`, Object.fromEntries(Object.entries(lat).map(([k, v]) => [k, v.achievedPerSec])), 'jobs/s', 0, 'max');
  for (const pct of ['p50', 'p99', 'max'] as const) {
    const vals = Object.fromEntries(Object.entries(lat).map(([k, v]) => [k, v[pct]]));
    section(`due-to-start ${pct} at ${r.plan.latencyRatePerSec}/s`, vals, 'ms', 1, 'min', lat.stampede?.[pct]);
  }
  // Runs from before the warm-up have none (their max above included the cold start).
  if (Object.values(lat).some((v) => v.warmupMax !== null)) {
    const vals = Object.fromEntries(Object.entries(lat).map(([k, v]) => [k, v.warmupMax]));
    section(`due-to-start max of the first ${r.plan.latencyWarmupSeconds} s (warm-up, not in the rows above)`, vals, 'ms', 1, 'min', lat.stampede?.warmupMax);
  }
  section(`worker peak RSS at ${r.plan.latencyRatePerSec}/s`, Object.fromEntries(Object.entries(lat).map(([k, v]) => [k, v.peakRssMiB])), 'MiB', 0, 'max');
  if (r.raw) {
    const raw = r.raw;
    const rawRow = (workload: string, v: number) => rows.push({ workload: 'physical limit (raw SQL)', config: workload, value: `${fmt(v)} /s`, ratio: '' });
    rawRow('single-row INSERT commits, 1 client', raw.insert1PerSec);
    rawRow('single-row INSERT commits, 16 clients', raw.insert16PerSec);
    rawRow('single-row INSERT + NOTIFY commits, 16 clients', raw.insertNotify16PerSec);
    rawRow(`claim 50 SKIP LOCKED + done, one commit, ${raw.clients} clients`, raw.claimDonePerSec);
    rawRow(`claim 50 SKIP LOCKED, then done, two commits, ${raw.clients} clients`, raw.claimThenDonePerSec);
    rawRow(`claim 50, done with the next claim, one commit per batch, ${raw.clients} clients`, raw.doneWithNextClaimPerSec);
  }
  if (r.scale) {
    for (const p of r.scale.points) {
      rows.push({ workload: 'claim latency (10 jobs, committed)', config: `${fmtRows(p.finishedRows)} finished rows`, value: `p50 ${fmt(p.claimP50Ms, 3)} ms, p99 ${fmt(p.claimP99Ms, 3)} ms`, ratio: '' });
    }
  }
  if (r.scale) {
    const s = r.scale;
    rows.push({ workload: 'sizing', config: 'hot table bytes per finished row (heap + indexes)', value: `${fmt(s.bytesPerRow)} B`, ratio: '' });
    rows.push({ workload: 'sizing', config: 'WAL per job (enqueue INSERT, claim, completion)', value: `${fmt(s.walBytesPerJob)} B`, ratio: '' });
  }
  if (r.archive) {
    const a = r.archive;
    rows.push({ workload: `archive ${fmtRows(a.rows)} done jobs`, config: 'JobArchiver moves to history', value: `${fmt(a.movedPerSec)} jobs/s`, ratio: '' });
    rows.push({ workload: 'sizing', config: 'WAL per archived job', value: `${fmt(a.walBytesPerRow)} B`, ratio: '' });
    rows.push({ workload: 'sizing', config: 'history bytes per job (heap + indexes)', value: `${fmt(a.historyBytesPerRow)} B`, ratio: '' });
    rows.push({ workload: 'retention', config: `drop the day partition of ${fmtRows(a.rows)} jobs`, value: `${fmt(a.dropPartitionMs, 1)} ms`, ratio: '' });
  }
  return rows;
}

export function renderTable(r: BenchResults): string {
  const rows = tableRows(r);
  const head: Row = { workload: 'workload', config: 'system (config)', value: 'median', ratio: 'stampede/peer' };
  const w = (k: keyof Row) => Math.max(...[head, ...rows].map((x) => x[k].length));
  const line = (x: Row) => `${x.workload.padEnd(w('workload'))}  ${x.config.padEnd(w('config'))}  ${x.value.padStart(w('value'))}  ${x.ratio.padStart(w('ratio'))}`;
  const out = [line(head), '-'.repeat(line(head).length), ...rows.map(line)];
  for (const t of r.targets) out.push('', `Against the targets of issue ${t.issue}:`, renderTargets(t.verdicts));
  return out.join('\n');
}

export function renderTargets(targets: TargetVerdict[]): string {
  return targets
    .map((t) => {
      const status = t.met === null ? 'NOT MEASURED' : t.met ? 'met' : `MISSED by ${(t.shortfall! * 100).toFixed(0)}%`;
      return `target: ${t.name}: measured ${fmt(t.measured, 2)} vs ${fmt(t.target, 2)}: ${status}${t.note ? ` (${t.note})` : ''}`;
    })
    .join('\n');
}

/** What `--preset issue15` runs and judges: the paragraph under "Run it yourself" of docs/benchmark.md. */
export const ISSUE15_PRESET =
  "**Issue 15's rows only:** `npm run bench -- --preset issue15` runs exactly what issue 15's \"Done when\" judges, " +
  'and prints a verdict per target ("Against the targets of issue 15"): ' +
  "drains of 20,000 and 100,000 jobs with 1 and 2 processes for `stampede` (defaults), `stampede-c500` (its largest config) and `graphile-batched`, " +
  "each drain row with stampede's ratio to graphile-worker batched and its share of the raw two-commit limit; " +
  "due-to-start at 500 jobs/s offered (15 s windows after a 1 s warm-up) for `stampede`, `graphile-c10` (graphile-worker at stampede's default concurrency, 10) and pg-boss's two batch configs; " +
  'worker peak RSS in every one of those runs; the raw-SQL limit. Five rounds, medians, systems interleaved. ' +
  'Targets: every drain row >= 1.2x graphile-batched; latency p99 <= the best peer at concurrency 10; latency max <= 50 ms; ' +
  'worker peak RSS <= the leanest peer in the same row (the verdict is the worst row). ' +
  'Add `--rounds 1` for a look in a fifth of the time, `--docs` to write this page from it. ' +
  'Its runs of record, round by round, newest first: [benchmark-issue15.md](benchmark-issue15.md).';

/** How the bench measures, in plain words: the paragraph under the table of docs/benchmark.md. */
export const HOW_IT_MEASURES =
  "How it measures: every system's worker runs in its own OS process, started the same way for all: plain `node` on the compiled bench " +
  '(`dist/bench/worker-child.js`, built by `npm run bench:build`, which `npm run bench` runs first), with no TypeScript loader, no execArgv and no NODE_OPTIONS; ' +
  'each child reports how it runs and the bench refuses one that runs any other way, so RSS and CPU compare like with like. ' +
  "stampede's child imports the package build in `dist/engine/`: the same Worker the gate runs, with leases, heartbeats, fencing, attempt accounting and the lease rescuer on. " +
  'The parent (producers, clocks, the raw SQL) runs under tsx, the same for every system. ' +
  'Drains start 1 or 2 worker processes on jobs already enqueued and stop the clock when the database shows every completion committed (looked at every 2 ms on a connection opened beforehand), or at the drain\'s budget ' +
  '(8 s for 20,000 jobs, 20 s for 100,000), past which the rate is over what committed and the row says the budget cut it; ' +
  "on stampede's drain rows the last column is its share of the raw two-commit limit (claim 50 SKIP LOCKED, then done). " +
  'Peak RSS is VmHWM of the worker processes, in every drain and in the latency run. ' +
  'Latency offers 500 jobs/s open-model (each enqueued at its own instant, not after the previous one) and measures from that instant to the start of the handler; ' +
  'the first second of arrivals, at the same rate, warms every system alike (fresh producer connections, the worker\'s first claims) and is reported apart, as the warm-up row; ' +
  "graphile-c10 is graphile-worker at stampede's default concurrency (10), the like-with-like latency row (graphile-worker's default is 1). " +
  'The physical-limit rows are plain SQL on a bare table on the same server. ' +
  'Sizing for 500 jobs/s over 7 days, retention and sharding are in docs/scaling.md; how to read these figures, and why a target is missed, in [performance.md](performance.md).';

/** docs/benchmark.md: the latest figures in plain words. */
export function renderMarkdown(r: BenchResults): string {
  const rows = tableRows(r);
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const lines = [
    '## Benchmark',
    '',
    `Run it yourself: \`${r.command}\` (about ${Math.round(r.durationSeconds / 60)} minutes here; \`npm run bench -- --quick\` is a one-minute smoke run, \`npm run bench -- --preset issue15\` runs only the rows issue 15 judges, \`-- --json\` prints one JSON object). Every run writes \`bench/results/<date>.json\`.`,
    '',
    ISSUE15_PRESET,
    '',
    `Latest run: ${r.date}, on ${r.machine.cores} cores (${r.machine.cpuModel}), ${r.machine.memGiB} GiB RAM, Node ${r.machine.node}, ${r.machine.postgres} (${r.machine.server}, fsync and synchronous_commit on). ` +
      `Peers: graphile-worker ${r.machine.versions['graphile-worker']}, pg-boss ${r.machine.versions['pg-boss']}. Medians of ${r.plan.rounds} rounds, systems interleaved, a fresh database per system per round. ` +
      `Load average ${r.machine.loadAverage1m.toFixed(1)} at the start, ${r.loadAverage1mAtEnd.toFixed(1)} at the end. ` +
      (r.machine.workerChild ? `Worker children: ${r.machine.workerChild}. ` : '') +
      'The last column is stampede\'s best figure for that row divided by the peer\'s (above 1 is better for throughput, below 1 is better for latency and memory).',
    '',
    '| workload | system (config) | median | stampede/peer |',
    '|---|---|---:|---:|',
    ...rows.map((x) => `| ${esc(x.workload)} | ${esc(x.config)} | ${esc(x.value)} | ${x.ratio} |`),
    '',
    ...r.targets.flatMap((t) => [`Against the targets of issue ${t.issue}:`, '', ...renderTargets(t.verdicts).split('\n').map((l) => `- ${l.replace(/^target: /, '')}`), '']),
    HOW_IT_MEASURES,
    '',
  ];
  return lines.join('\n');
}
