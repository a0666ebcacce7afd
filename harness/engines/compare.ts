import { JobIndex, TERMINAL_STATES } from '../checkers/jobs.ts';
import { maxOf, median } from '../checkers/types.ts';
import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';

/** The figures the side-by-side table puts under the invariants, for one engine's run. */
export interface KeyFigures {
  acknowledged: number;
  /** Acknowledged jobs whose row is gone without a successful run. */
  lost: number;
  /** Acknowledged jobs still unfinished at the end (stuck: held by a dead worker, or the drain ran out). */
  unfinished: number;
  /** Effects applied more than once, counted beyond the first. */
  duplicatedEffects: number;
  /** Jobs a kill caught in flight, and the delay until another worker claimed each (ms); never: not claimed again by the end. */
  killed: number;
  redeliveryMedianMs: number;
  redeliveryMaxMs: number;
  neverRedelivered: number;
  oldestAgePeakMs: number;
  /** From the peak to the first sample back under the SLO, ms; NaN: never back under. */
  recoveryMs: number;
}

export function keyFigures(history: readonly HistoryEvent[], final: FinalState, sloMs: number): KeyFigures {
  const idx = new JobIndex(history, final);
  let acknowledged = 0;
  let lost = 0;
  let unfinished = 0;
  for (const r of idx.ops.values()) {
    if (!r.ok) continue;
    acknowledged++;
    if (!r.job) lost++;
    else if (!TERMINAL_STATES.has(r.job.state)) unfinished++;
  }
  const duplicatedEffects = Object.values(final.effects).reduce((n, c) => n + Math.max(0, c - 1), 0);
  // A kill's victims: the jobs in flight when it landed (the nemesis's evidence) or the job at an armed kill point.
  const kills: { jobId: number; t: number; node?: string }[] = [];
  for (const e of history) {
    if (e.type !== 'fault:evidence' || e.fault !== 'worker-kill') continue;
    const ids = Array.isArray(e.detail.jobIds) ? (e.detail.jobIds as number[]) : typeof e.detail.jobId === 'number' ? [e.detail.jobId] : [];
    for (const jobId of ids) kills.push({ jobId, t: e.t });
  }
  const delays: number[] = [];
  let never = 0;
  for (const k of kills) {
    const again = history.find((e) => e.type === 'job:claimed' && e.jobId === k.jobId && e.t > k.t);
    if (again) delays.push(again.t - k.t);
    else if (!final.jobs.some((j) => j.id === k.jobId && j.state === 'done')) never++;
  }
  const samples = history.filter((e): e is Extract<HistoryEvent, { type: 'sample' }> => e.type === 'sample');
  const ages = samples.map((s) => ({ t: s.t, age: maxOf(Object.values(s.oldestUnclaimedAgeMs)) || 0 }));
  const peak = ages.reduce((a, b) => (b.age > a.age ? b : a), { t: 0, age: 0 });
  const back = ages.find((a) => a.t > peak.t && a.age < sloMs);
  return {
    acknowledged,
    lost,
    unfinished,
    duplicatedEffects,
    killed: kills.length,
    redeliveryMedianMs: median(delays),
    redeliveryMaxMs: maxOf(delays),
    neverRedelivered: never,
    oldestAgePeakMs: peak.age,
    recoveryMs: peak.age < sloMs ? 0 : back ? back.t - peak.t : Number.NaN,
  };
}

/** One engine's column of the side-by-side table. */
export interface EngineColumn {
  engine: string;
  version: string;
  verdict: string;
  /** The command that reproduces this column alone. */
  command: string;
  invariants: InvariantResult[];
  figures: KeyFigures | null;
  /** Set when the scenario could not run against this engine (and why). */
  skipped?: string;
}

function cell(r: InvariantResult | undefined): string {
  if (!r) return '';
  if (r.pass === 'not-promised') return 'not promised';
  if (r.pass === true) return 'held';
  if (r.pass === 'unknown') return `unknown: ${r.figure}`;
  const ex = r.examples?.length ? `; e.g. ${JSON.stringify(r.examples.slice(0, 2))}` : '';
  return `VIOLATED: ${r.figure}${ex}`;
}

const secs = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : 'n/a');

/** The side-by-side table (Markdown): invariants, then key figures, then the command of each column. */
export function renderComparison(scenario: string, seed: number, cols: EngineColumn[]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const row = (cells: string[]) => `| ${cells.map(esc).join(' | ')} |`;
  const names = [...new Set(cols.flatMap((c) => c.invariants.map((i) => i.name)))];
  const fig = (label: string, f: (k: KeyFigures) => string) => row([label, ...cols.map((c) => (c.figures ? f(c.figures) : '—'))]);
  return [
    `## ${scenario}, seed ${seed}`,
    '',
    row(['', ...cols.map((c) => `${c.engine} ${c.version}`)]),
    row(['---', ...cols.map(() => '---')]),
    row(['verdict', ...cols.map((c) => c.skipped ?? c.verdict)]),
    ...names.map((n) => row([`\`${n}\``, ...cols.map((c) => cell(c.invariants.find((i) => i.name === n)))])),
    fig('jobs acknowledged', (k) => String(k.acknowledged)),
    fig('jobs lost', (k) => String(k.lost)),
    fig('jobs unfinished at the end', (k) => String(k.unfinished)),
    fig('duplicated effects', (k) => String(k.duplicatedEffects)),
    fig('jobs caught by a kill', (k) => String(k.killed)),
    fig('redelivery after a kill (median / max)', (k) => `${secs(k.redeliveryMedianMs)} / ${secs(k.redeliveryMaxMs)}`),
    fig('killed jobs never run again', (k) => String(k.neverRedelivered)),
    fig('oldest-age peak', (k) => secs(k.oldestAgePeakMs)),
    fig('back under the SLO after the peak', (k) => (k.recoveryMs === 0 ? 'never over' : Number.isNaN(k.recoveryMs) ? 'never' : secs(k.recoveryMs))),
    row(['reproduce', ...cols.map((c) => `\`${c.command}\``)]),
    '',
  ].join('\n');
}
