import pg from 'pg';
import { systemClock } from '../../engine/clock.ts';
import { Db, type Queryable } from '../../engine/db.ts';
import { createLogger } from '../../engine/log.ts';
import { composeRound, QUEUE_STATE_SAMPLER_DEFAULTS, QueueStateSampler } from '../../engine/metrics/queue-state-sampler.ts';
import { loadQueries } from '../../engine/sql.ts';
import type { BenchContext } from '../context.ts';
import type { Medians } from '../report.ts';
import { drainKey } from '../targets.ts';
import { wallMs } from '../proc.ts';
import { configById, WITHOUT_INDEX_CONFIG } from '../systems/configs.ts';

const q = loadQueries(new URL('../sampler-baseline.sql', import.meta.url), [
  'BaselineClaimableByQueue',
  'BaselineDeadLettersByQueue',
  'SamplerFillDone',
  'SamplerFillClaimable',
  'SamplerTrueDepth',
] as const);

/** The old round's per-queue cap (depthCapRows' default). */
const BASELINE_CAP = 100_000;

export interface SamplerPoint {
  queues: number;
  claimable: number;
  /** 'insert': right after the claimable rows went in (visibility map not set); 'vacuum': after VACUUM. */
  state: 'insert' | 'vacuum';
  round: 'old' | 'new';
  medianMs: number;
  maxMs: number;
  /** Index entries the round read (its counts and its probes), median. */
  entriesRead: number;
  /** Queues whose depth the round estimated, and the largest |estimate - true| / true among them (new round only). */
  estimatedQueues: number;
  maxEstimateError: number | null;
}

export interface SamplerResult {
  doneRows: number;
  roundRowBudget: number;
  rounds: number;
  points: SamplerPoint[];
}

/**
 * The queue-state round's cost as the backlog grows, the new round (a row
 * budget per round) beside the old (a cap of 100,000 rows per queue) in the
 * same database at the same moment, alternating, `rounds` of each. Per queue
 * count: a fresh database, `doneRows` finished rows and a VACUUM ANALYZE (a
 * table with a history), then the claimable rows in one INSERT ... SELECT
 * generate_series to each size in turn, measured right after the insert and
 * again after a VACUUM. Autovacuum is off for the table, so "right after the
 * insert" stays that state for the measurement.
 */
export async function runSampler(ctx: BenchContext, sizes: number[], queueCounts: number[], doneRows: number, rounds: number): Promise<SamplerResult> {
  const budget = QUEUE_STATE_SAMPLER_DEFAULTS.roundRowBudget;
  const points: SamplerPoint[] = [];
  for (const queues of queueCounts) {
    const handle = await ctx.freshDatabase(configById('stampede'));
    const db = new Db({ connectionString: handle.url, maxConnections: 2, applicationName: 'stampede:bench-sampler' });
    try {
      await db.query('ALTER TABLE stampede.jobs SET (autovacuum_enabled = false)');
      await db.query(q.SamplerFillDone, [doneRows, queues]);
      await db.query(q.SamplerFillClaimable, [1_000, queues]);
      await db.query('VACUUM ANALYZE stampede.jobs');
      const sampler = new QueueStateSampler(db, systemClock, null, { statementTimeoutMs: 600_000 }, createLogger('bench:sampler', 'silent'));
      const oldRound = composeRound(
        sampler.plannedQueries().map((p) =>
          p.name === 'ClaimableByQueue' ? { name: p.name, text: q.BaselineClaimableByQueue } : p.name === 'DeadLettersByQueue' ? { name: p.name, text: q.BaselineDeadLettersByQueue } : p,
        ),
      );
      let have = 1_000;
      for (const size of sizes) {
        const started = wallMs();
        await db.query(q.SamplerFillClaimable, [size - have, queues]);
        have = size;
        ctx.log.info('sampler: claimable inserted', { queues, claimable: size, seconds: ((wallMs() - started) / 1000).toFixed(1) });
        const truth = new Map<string, number>();
        const measure = async (state: SamplerPoint['state']) => {
          const runs = { old: [] as { ms: number; read: number; rows: any }[], new: [] as { ms: number; read: number; rows: any }[] };
          for (let i = 0; i < rounds; i++) {
            // The old round as the old sampler ran it (its timeout only); the new one as the sampler runs it now.
            runs.old.push(await timedRound(db, [{ text: 'SET TRANSACTION READ ONLY' }], oldRound, [BASELINE_CAP]));
            runs.new.push(await timedRound(db, sampler.roundSettings(), sampler.roundQuery(), sampler.roundParams()));
          }
          if (truth.size === 0) for (const r of (await db.query(q.SamplerTrueDepth)).rows) truth.set(r.queue, Number(r.claimable));
          for (const round of ['old', 'new'] as const) {
            const last = runs[round].at(-1)!.rows.ClaimableByQueue as { queue: string; claimable: number; estimated?: boolean; capped?: boolean }[];
            const estimated = last.filter((r) => r.estimated ?? r.capped);
            const errors = estimated.map((r) => Math.abs(r.claimable - truth.get(r.queue)!) / truth.get(r.queue)!);
            const point: SamplerPoint = {
              queues,
              claimable: size,
              state,
              round,
              medianMs: median(runs[round].map((r) => r.ms)),
              maxMs: Math.max(...runs[round].map((r) => r.ms)),
              entriesRead: median(runs[round].map((r) => r.read)),
              estimatedQueues: estimated.length,
              maxEstimateError: errors.length ? Math.max(...errors) : null,
            };
            points.push(point);
            ctx.log.info('sampler', { ...point, maxEstimateError: point.maxEstimateError?.toFixed(3) });
          }
        };
        await measure('insert');
        await db.query('VACUUM stampede.jobs');
        await measure('vacuum');
      }
    } finally {
      await db.close();
      await handle.drop();
    }
  }
  return { doneRows, roundRowBudget: budget, rounds, points };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/**
 * One round in its own transaction, as the sampler runs it: its wall time; then the index entries it
 * reads, from the same statement under EXPLAIN (ANALYZE, TIMING OFF), run after the timed one.
 */
async function timedRound(db: Db, settings: { text: string; params?: unknown[] }[], text: string, params: unknown[]): Promise<{ ms: number; read: number; rows: Record<string, unknown> }> {
  return db.transaction(async (tx: pg.PoolClient) => {
    for (const setting of settings) await tx.query(setting.text, setting.params);
    const started = wallMs();
    const rows = (await tx.query(text, params)).rows[0];
    const ms = wallMs() - started;
    return { ms, read: await indexEntriesRead(tx, text, params), rows };
  });
}

/** Index entries a statement reads: the rows its index scans return (times their loops), from EXPLAIN ANALYZE. */
export async function indexEntriesRead(db: Queryable, text: string, params: unknown[]): Promise<number> {
  const plan = (await db.query(`EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ${text}`, params)).rows[0]['QUERY PLAN'][0].Plan;
  const nodes = (n: any): any[] => [n, ...(n.Plans ?? []).flatMap(nodes)];
  // stampede's own indexes: the catalog's (the health figures read pg_index for the jobs table's indexes) grow
  // with the number of indexes, not with the backlog, and are not what a budget bounds.
  return nodes(plan)
    .filter((n) => n['Index Name'] !== undefined && !String(n['Index Name']).startsWith('pg_'))
    .reduce((sum, n) => sum + n['Actual Rows'] * n['Actual Loops'], 0);
}

/** The sampler table for docs/metrics.md. */
export function renderSamplerTable(r: SamplerResult): string {
  const lines = [
    '| queues | claimable | state | old round: median (max) ms | old: entries read | new round: median (max) ms | new: entries read | new: queues estimated, max error |',
    '| ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |',
  ];
  const key = (p: SamplerPoint) => `${p.queues}/${p.claimable}/${p.state}`;
  const olds = new Map(r.points.filter((p) => p.round === 'old').map((p) => [key(p), p]));
  for (const n of r.points.filter((p) => p.round === 'new')) {
    const o = olds.get(key(n))!;
    const err = n.estimatedQueues ? `${n.estimatedQueues}, ${(n.maxEstimateError! * 100).toFixed(1)} %` : '0';
    lines.push(
      `| ${n.queues} | ${n.claimable.toLocaleString('en')} | ${n.state === 'insert' ? 'right after the insert' : 'after VACUUM'} | ${o.medianMs.toFixed(0)} (${o.maxMs.toFixed(0)}) | ${o.entriesRead.toLocaleString('en')} | ${n.medianMs.toFixed(1)} (${n.maxMs.toFixed(1)}) | ${n.entriesRead.toLocaleString('en')} | ${err} |`,
    );
  }
  return lines.join('\n');
}

/**
 * What the round's index costs the write path: each write row of the run's
 * medians, `stampede` beside `stampede-without-0020` (same run, interleaved
 * rounds), and their ratio (below 1: slower with the index).
 */
export function renderIndexCostTable(m: Medians, drains: { jobs: number; procs: number }[]): string {
  const rows: [string, number | null | undefined, number | null | undefined][] = [
    ['enqueue, one INSERT each (10 at once)', m.enqueueOne.stampede, m.enqueueOne[WITHOUT_INDEX_CONFIG]],
    ['enqueue, one batch (the drains\' load)', m.enqueueBatch.stampede, m.enqueueBatch[WITHOUT_INDEX_CONFIG]],
    ...drains.map(({ jobs, procs }): [string, number | null | undefined, number | null | undefined] => [
      `drain ${jobs.toLocaleString('en')} jobs, ${procs} process${procs > 1 ? 'es' : ''}`,
      m.drain[drainKey('stampede', procs, jobs)]?.drainJobsPerSec,
      m.drain[drainKey(WITHOUT_INDEX_CONFIG, procs, jobs)]?.drainJobsPerSec,
    ]),
  ];
  const fmt = (v: number | null | undefined) => (v == null ? 'n/a' : Math.round(v).toLocaleString('en'));
  return [
    '| workload | with jobs_oldest_idx, jobs/s | without, jobs/s | with / without |',
    '| --- | ---: | ---: | ---: |',
    ...rows.map(([what, withIdx, without]) => `| ${what} | ${fmt(withIdx)} | ${fmt(without)} | ${withIdx && without ? (withIdx / without).toFixed(2) : 'n/a'} |`),
  ].join('\n');
}
