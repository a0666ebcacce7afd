/** Pure summary statistics of the bench. */

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Nearest-rank percentile, p in [0, 100]. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
}

export interface LatencySummary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function latencySummary(xs: readonly number[]): LatencySummary {
  return { n: xs.length, p50: percentile(xs, 50), p95: percentile(xs, 95), p99: percentile(xs, 99), max: xs.length ? Math.max(...xs) : NaN };
}

/** Medians field by field of several rounds' summaries. */
export function medianOf<T extends Record<string, number | null>>(rounds: readonly T[]): T {
  const out: Record<string, number | null> = {};
  for (const key of Object.keys(rounds[0] ?? {})) {
    const vals = rounds.map((r) => r[key]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
    out[key] = vals.length ? median(vals) : null;
  }
  return out as T;
}

/** How a measured value stands against a target: met, or missed by what fraction. */
export interface TargetVerdict {
  name: string;
  measured: number | null;
  target: number | null;
  /** 'higher': measured must be >= target; 'lower': measured must be <= target. */
  better: 'higher' | 'lower';
  met: boolean | null;
  /** How far off, as a fraction of the target (0.25 = missed by 25%); 0 when met. */
  shortfall: number | null;
  note: string;
}

export function verdict(name: string, measured: number | null, target: number | null, better: 'higher' | 'lower', note = ''): TargetVerdict {
  if (measured === null || target === null || !Number.isFinite(measured) || !Number.isFinite(target) || target === 0) {
    return { name, measured, target, better, met: null, shortfall: null, note: note || 'not measured' };
  }
  const met = better === 'higher' ? measured >= target : measured <= target;
  const shortfall = met ? 0 : better === 'higher' ? (target - measured) / target : (measured - target) / target;
  return { name, measured, target, better, met, shortfall, note };
}

/** The entry with the highest (`max`) or lowest (`min`) finite value, or null when none has one. */
export function best(entries: [string, number | null][], pick: 'max' | 'min'): [string, number] | null {
  const ok = entries.filter((e): e is [string, number] => typeof e[1] === 'number' && Number.isFinite(e[1]));
  if (!ok.length) return null;
  return ok.reduce((a, b) => ((pick === 'max' ? b[1] > a[1] : b[1] < a[1]) ? b : a));
}
