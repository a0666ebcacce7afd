import type { ReportInput } from './input.ts';
import { toRunT, type HistoryIndex } from './job-index.ts';

/**
 * Time series behind the charts and the CSV files: the `sample` events as
 * they were recorded, and per-second counts computed from job events.
 */
export interface RateRow {
  /** Start of the second, s since the run started. */
  second: number;
  /** Enqueues the load model intended in this second (by `intendedAt`). */
  offered: number;
  /** Enqueues acknowledged in this second (`enqueue:ok`). */
  achieved: number;
  claimed: number;
  completed: number;
  failed: number;
  dead: number;
}

export function queuesOf(idx: HistoryIndex): string[] {
  const qs = new Set<string>();
  for (const s of idx.samples) {
    for (const q of Object.keys(s.depthByQueue)) qs.add(q);
    for (const q of Object.keys(s.oldestUnclaimedAgeMs)) qs.add(q);
  }
  return [...qs].sort();
}

export function perSecondRates(input: ReportInput, idx: HistoryIndex): RateRow[] {
  const seconds = Math.max(1, Math.ceil(idx.endT / 1000));
  const rows: RateRow[] = Array.from({ length: seconds }, (_, second) => ({ second, offered: 0, achieved: 0, claimed: 0, completed: 0, failed: 0, dead: 0 }));
  const at = (t: number) => rows[Math.min(seconds - 1, Math.max(0, Math.floor(t / 1000)))];
  // Offered load counts each generator op once, at the instant it was meant to go out, so a late send still counts where it was due.
  const offeredOps = new Map<number, number>();
  for (const e of input.history) {
    switch (e.type) {
      case 'enqueue:invoke':
      case 'enqueue:late':
        if (!offeredOps.has(e.op)) offeredOps.set(e.op, toRunT(e.intendedAt, idx.base));
        break;
      case 'enqueue:ok':
        at(e.t).achieved++;
        break;
      case 'job:claimed':
        at(e.t).claimed++;
        break;
      case 'job:completed':
        at(e.t).completed++;
        break;
      case 'job:failed':
        at(e.t).failed++;
        break;
      case 'job:dead':
        at(e.t).dead++;
        break;
      default:
        break;
    }
  }
  for (const t of offeredOps.values()) at(t).offered++;
  return rows;
}

function csvCell(v: string | number): string {
  const s = String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function csv(header: string[], rows: (string | number)[][]): string {
  return [header, ...rows].map((r) => r.map(csvCell).join(',')).join('\n') + '\n';
}

/** One row per `sample` event: depth and oldest age per lane, then the dead-letter depth and the cumulative counters. */
export function timeseriesCsv(idx: HistoryIndex): string {
  const qs = queuesOf(idx);
  const header = ['t_ms', ...qs.map((q) => `depth:${q}`), ...qs.map((q) => `oldest_age_ms:${q}`), 'dead_letter_depth', 'claimed', 'done', 'failed', 'dead'];
  const rows = idx.samples.map((s) => [
    s.t,
    ...qs.map((q) => s.depthByQueue[q] ?? 0),
    ...qs.map((q) => s.oldestUnclaimedAgeMs[q] ?? 0),
    s.deadLetterDepth,
    s.claimed,
    s.done,
    s.failed,
    s.dead,
  ]);
  return csv(header, rows);
}

export function ratesCsv(rates: RateRow[]): string {
  const header = ['second', 'offered', 'achieved', 'claimed', 'completed', 'failed', 'dead'];
  return csv(header, rates.map((r) => [r.second, r.offered, r.achieved, r.claimed, r.completed, r.failed, r.dead]));
}
