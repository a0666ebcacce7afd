import { graphileFamily } from './graphile.ts';
import { pgBossFamily } from './pgboss.ts';
import { stampedeFamily } from './stampede.ts';
import type { FamilyName, SystemConfig, SystemFamily } from './types.ts';

export const FAMILIES: Record<FamilyName, SystemFamily> = {
  stampede: stampedeFamily,
  'graphile-worker': graphileFamily,
  'pg-boss': pgBossFamily,
};

/**
 * Every configuration the bench runs. Peers run as their documentation
 * recommends; stampede runs with its defaults and with a larger batch.
 */
export const CONFIGS: SystemConfig[] = [
  {
    id: 'stampede',
    family: 'stampede',
    label: 'defaults (concurrency 10, claim-ahead 10, LISTEN)',
    settings: {},
    notify: true,
    concurrency: 10,
  },
  {
    id: 'stampede-c50',
    family: 'stampede',
    label: 'concurrency 50, claim-ahead 50 (the default: = concurrency)',
    settings: { concurrency: 50 },
    notify: true,
    concurrency: 50,
  },
  {
    // graphile-batched holds up to 524 jobs per process (24 running, 500 in its local queue); this holds up to 1,000.
    id: 'stampede-c500',
    family: 'stampede',
    label: 'concurrency 500, claim-ahead 500 (the default: = concurrency)',
    settings: { concurrency: 500 },
    notify: true,
    concurrency: 500,
  },
  {
    // The defaults before the claim-ahead buffer grew with a backlog: a claimAhead that is set stays as set.
    id: 'stampede-ca10',
    family: 'stampede',
    label: 'concurrency 10, claim-ahead set to 10 (a fixed buffer: the defaults before it grew with a backlog)',
    settings: { claimAhead: 10 },
    notify: true,
    concurrency: 10,
  },
  {
    // The claims of stampede-c500 (up to 500 at once) without 500 handlers at once: the held-horizon bench's test of
    // whether the claim's batch alone is what keeps up (bench/workloads/horizon.ts).
    id: 'stampede-ca500',
    family: 'stampede',
    label: 'concurrency 10, claim-ahead 500',
    settings: { claimAhead: 500 },
    notify: true,
    concurrency: 10,
  },
  {
    id: 'graphile-default',
    family: 'graphile-worker',
    label: 'defaults (concurrency 1, LISTEN)',
    settings: {},
    notify: true,
    concurrency: 1,
  },
  {
    // Its default runs one job at a time; at stampede's default concurrency the latency rows compare like with like.
    // One connection more than the concurrency: its LISTEN holds one.
    id: 'graphile-c10',
    family: 'graphile-worker',
    label: "concurrency 10 (stampede's default), LISTEN",
    settings: { concurrency: 10, maxPoolSize: 11 },
    notify: true,
    concurrency: 10,
  },
  {
    // https://worker.graphile.org/docs/performance: the configuration behind its published figures.
    id: 'graphile-batched',
    family: 'graphile-worker',
    label: 'concurrency 24, localQueue 500, batch completion 0 ms',
    settings: { concurrency: 24, maxPoolSize: 25, localQueueSize: 500, completeJobBatchDelay: 0, failJobBatchDelay: 0 },
    notify: true,
    concurrency: 24,
  },
  {
    id: 'pgboss-batch',
    family: 'pg-boss',
    label: 'batchSize 50, burst, polling 0.5 s (no NOTIFY)',
    settings: { batchSize: 50, burstWhenBatchFull: true, pollingIntervalSeconds: 0.5, notify: false },
    notify: false,
    concurrency: 50,
  },
  {
    id: 'pgboss-batch-notify',
    family: 'pg-boss',
    label: 'batchSize 50, burst, LISTEN/NOTIFY',
    settings: { batchSize: 50, burstWhenBatchFull: true, pollingIntervalSeconds: 0.5, notify: true },
    notify: true,
    concurrency: 50,
  },
];

/** stampede without the queue-state round's index (migration 0020's jobs_oldest_idx). */
export const WITHOUT_INDEX_CONFIG = 'stampede-without-0020';

/**
 * stampede on an older schema: the before of a schema change's cost, run only
 * by the preset that measures it beside `stampede` (never by the full run).
 */
export const SCHEMA_BASELINES: SystemConfig[] = [
  {
    // Issue 47's index (migration 0020): what one more index entry per enqueue costs the enqueue and the drain.
    id: WITHOUT_INDEX_CONFIG,
    family: 'stampede',
    label: "defaults, without 0020's jobs_oldest_idx",
    settings: { dropIndexes: ['jobs_oldest_idx'] },
    notify: true,
    concurrency: 10,
  },
];

export function configById(id: string): SystemConfig {
  const all = [...CONFIGS, ...SCHEMA_BASELINES];
  const c = all.find((x) => x.id === id);
  if (!c) throw new Error(`unknown system config "${id}"; expected one of ${all.map((x) => x.id).join(', ')}`);
  return c;
}
