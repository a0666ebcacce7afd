import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HistoryEvent } from '../history.ts';

/**
 * Per-second series a scenario is about, computed from a stored run's
 * history.jsonl, for the gate's output and figures file: the retry rate after
 * a shared outage (retry-storm), and dead tuples, the xmin horizon's age,
 * claim latency and throughput while the horizon is pinned (xmin-horizon).
 * Pure over the history; the report's own charts show the rest.
 */
export interface SecondRow {
  second: number;
  /** Claims of attempt > 1 that second. */
  retries: number;
  /** Claims that second. */
  claims: number;
  completed: number;
  /** p99 of due-to-claim latency of that second's claims, ms (database clock). */
  claimP99Ms: number | null;
  /** Last sample of that second. */
  deadTuples: number | null;
  xminAgeMs: number | null;
}

export function readHistory(dir: string): HistoryEvent[] {
  return readFileSync(join(dir, 'history.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as HistoryEvent);
}

function p99(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

/** One row per second from the start of the load phase. */
export function perSecond(history: readonly HistoryEvent[]): SecondRow[] {
  const load = history.find((e) => e.type === 'run:phase' && e.phase === 'load')?.t ?? 0;
  const end = history.reduce((m, e) => Math.max(m, e.t), 0);
  const n = Math.max(1, Math.ceil((end - load) / 1000));
  const rows: SecondRow[] = Array.from({ length: n }, (_, second) => ({ second, retries: 0, claims: 0, completed: 0, claimP99Ms: null, deadTuples: null, xminAgeMs: null }));
  const lat: number[][] = rows.map(() => []);
  const at = (t: number) => Math.min(n - 1, Math.max(0, Math.floor((t - load) / 1000)));
  for (const e of history) {
    if (e.t < load) continue;
    const i = at(e.t);
    if (e.type === 'job:claimed') {
      rows[i].claims++;
      if (e.attempt > 1) rows[i].retries++;
      const claimedAt = e.dbTime ?? e.nodeTime;
      if (typeof claimedAt === 'number' && typeof e.runAt === 'number') lat[i].push(Math.max(0, claimedAt - e.runAt));
    } else if (e.type === 'job:completed') {
      rows[i].completed++;
    } else if (e.type === 'sample') {
      if (typeof e.deadTuples === 'number') rows[i].deadTuples = e.deadTuples;
      if (typeof e.xminAgeMs === 'number') rows[i].xminAgeMs = e.xminAgeMs;
    }
  }
  rows.forEach((r, i) => (r.claimP99Ms = p99(lat[i])));
  return rows;
}

const BARS = ' ▁▂▃▄▅▆▇█';

/** A one-line bar chart of a series (its maximum is a full bar). */
export function sparkline(values: readonly (number | null)[]): string {
  const max = Math.max(0, ...values.map((v) => v ?? 0));
  return values.map((v) => (v === null ? ' ' : BARS[max === 0 ? 0 : Math.round(((v ?? 0) / max) * (BARS.length - 1))])).join('');
}

/** Which series each scenario is about; scenarios not listed get none. */
const FIGURES: Record<string, (keyof SecondRow)[]> = {
  'retry-storm': ['retries', 'claims'],
  'xmin-horizon': ['deadTuples', 'xminAgeMs', 'claimP99Ms', 'completed'],
};

/** The scenario's series as sparklines with their peaks, for stdout and figures.md; empty for scenarios without any. */
export function figureLines(scenario: string, history: readonly HistoryEvent[]): string[] {
  const keys = FIGURES[scenario];
  if (!keys) return [];
  const rows = perSecond(history);
  return keys.map((k) => {
    const vs = rows.map((r) => r[k] as number | null);
    const max = Math.max(0, ...vs.map((v) => v ?? 0));
    const unit = k === 'deadTuples' ? 'dead tuples' : k === 'xminAgeMs' || k === 'claimP99Ms' ? 'ms' : 'per s';
    return `${String(k).padEnd(11)} |${sparkline(vs)}| max ${Math.round(max)} ${unit} (${rows.length} s from the load start)`;
  });
}

/** The same series as a CSV table. */
export function figuresCsv(history: readonly HistoryEvent[]): string {
  const rows = perSecond(history);
  const head = 'second,claims,retries,completed,claim_p99_ms,dead_tuples,xmin_age_ms';
  const cell = (v: number | null) => (v === null ? '' : String(Math.round(v)));
  return [head, ...rows.map((r) => [r.second, r.claims, r.retries, r.completed, cell(r.claimP99Ms), cell(r.deadTuples), cell(r.xminAgeMs)].join(','))].join('\n') + '\n';
}
