/**
 * Number and time formatting shared by every output, so report.md,
 * report.html, report.json and the chart labels all say the same thing.
 */

/** Nearest-rank percentile (p in 0..100) of `values`; null when empty. Nearest rank, so the figure is one that was observed. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

/** A duration for people: `850 ms`, `12.3 s`, `4 min 05 s`, `1 h 02 min`. */
export function fmtDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return 'n/a';
  const sign = ms < 0 ? '-' : '';
  const a = Math.abs(ms);
  // Round to the unit shown first, so 3,599.6 s reads 1 h 00 min, not 59 min 60 s.
  if (a < 999.5) return `${sign}${Math.round(a)} ms`;
  if (a < 59_950) return `${sign}${(a / 1000).toFixed(1)} s`;
  const secs = Math.round(a / 1000);
  if (secs < 3_600) return `${sign}${Math.floor(secs / 60)} min ${String(secs % 60).padStart(2, '0')} s`;
  const mins = Math.round(a / 60_000);
  return `${sign}${Math.floor(mins / 60)} h ${String(mins % 60).padStart(2, '0')} min`;
}

/** A signed offset such as a clock jump: `+60 min`, `-1.5 s`. */
export function fmtOffset(ms: number): string {
  if (Math.abs(ms) >= 60_000 && ms % 60_000 === 0) return `${ms > 0 ? '+' : '-'}${Math.abs(ms) / 60_000} min`;
  return `${ms >= 0 ? '+' : ''}${fmtDuration(ms)}`;
}

/** A point on the run's time axis: `t=+12.3 s` (seconds since the run started). */
export function fmtT(t: number): string {
  return `t=+${(t / 1000).toFixed(1)} s`;
}

/** Integer with thousands separators, fixed locale so output is reproducible. */
export function fmtCount(n: number): string {
  return n.toLocaleString('en-US');
}

/**
 * A rate's number for a one-line summary: whole numbers from 10 up, two significant digits below, so a trickle of
 * one job every 3 s reads 0.33, not 0 or 0.3333333333333333.
 */
export function fmtRateNumber(perSecond: number): string {
  return perSecond >= 10 ? String(Math.round(perSecond)) : String(Number(perSecond.toPrecision(2)));
}

/** A rate in jobs/s with one decimal. */
export function fmtRate(perSecond: number): string {
  return `${perSecond.toFixed(1)} jobs/s`;
}

/** Joins a list for prose: `a, b and c`; long lists end with `and N more`. */
export function fmtList(items: readonly (string | number)[], max = 8): string {
  const shown = items.slice(0, max).map(String);
  const rest = items.length - shown.length;
  if (rest > 0) return `${shown.join(', ')} and ${rest} more`;
  if (shown.length <= 1) return shown.join('');
  return `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}`;
}

/** `1 job`, `3 jobs`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${fmtCount(n)} ${n === 1 ? one : many}`;
}

/** A fault or evidence detail object as `key=value` pairs, for timeline text. */
export function fmtDetail(detail: Record<string, unknown>): string {
  return Object.entries(detail)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
}
