import { ARCHIVE_DEFAULTS } from '../../engine/archive/job-archiver.ts';
import { dbClockSteps, eventsOf, type FinalState, type HistoryEvent, type InvariantResult } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface ArchiveRetentionBounds {
  /** JobArchiver.retentionDays the archiver ran with (the runner passes none: its default). */
  retentionDays: number;
  /** JobArchiver.partitionsAheadDays the archiver ran with (its default, likewise). */
  partitionsAheadDays: number;
  /** The archiver's --interval-ms: a pass begins at most this long (plus its own duration) after the last one ended. */
  intervalMs: number;
  /** How long a pass and the start of the next may take beyond intervalMs (a pass with nothing to move takes milliseconds). */
  slackMs: number;
}

const DAY_MS = 86_400_000;
const DAY_PARTITION = /^job_history_p(\d{4})(\d{2})(\d{2})$/;

/** The UTC day (days since the epoch) a day partition holds, from its name (migration 0006's job_history_partition_name); undefined for any other name. */
export function partitionDay(name: string): number | undefined {
  const m = DAY_PARTITION.exec(name);
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / DAY_MS : undefined;
}

/** The name of the partition that holds `day`, as the migration spells it: for examples. */
function partitionName(day: number): string {
  return `job_history_p${new Date(day * DAY_MS).toISOString().slice(0, 10).replace(/-/g, '')}`;
}

const dayOf = (dbMs: number) => Math.floor(dbMs / DAY_MS);
const days = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

/**
 * The archiver keeps day partitions ahead and drops whole ones past their
 * retention (JobArchiver.retentionDays, partitionsAheadDays), judged from the
 * harness's own readings of the catalog (`archive:partitions`), not from what
 * the archiver reported. The reading taken once the archiver stopped (its
 * last exit a graceful one, exit 0: its last pass, create and drop, finished)
 * is judged against the partitions every reading up to it saw:
 *
 * (a) every one whose whole day ended retentionDays or more before the
 *     database's day `lo` is gone;
 * (b) none whose day is retentionDays or fewer before the database's day at
 *     the reading (`hi`) was dropped;
 * (c) the days from `hi` to `lo` + partitionsAheadDays exist.
 *
 * `lo` is the database's day at the latest reading taken intervalMs + slackMs
 * before the archiver stopped: a pass began after it and finished before the
 * stop, so every pass it judges ran on a day in [lo, hi] (two days only when
 * a midnight fell in between; a partition near the line is then not judged).
 * Readings while the archiver runs are not judged themselves: a pass creates
 * the days from its oldest done row before it drops those past retention, so
 * between two of its statements a past-retention day may be there again.
 * Inconclusive with no reading after a graceful stop, none early enough, or
 * no partition past retention (a run whose database clock did not pass it).
 */
export function checkArchiveRetention(history: readonly HistoryEvent[], _final: FinalState, b: ArchiveRetentionBounds): InvariantResult {
  const name = 'archive-retention';
  const bound = `after the archiver's passes: each day partition ${fmt(b.retentionDays)} days or more past its end gone, none within ${fmt(b.retentionDays)} days dropped, today to +${fmt(b.partitionsAheadDays)} days there`;
  const reads = eventsOf(history, 'archive:partitions').filter((r) => r.dbTime !== undefined);
  const unknown = (figure: string): InvariantResult => ({ name, pass: 'unknown', figure, bound, judged: { n: 0, what: 'day partitions' } });
  const lastExit = eventsOf(history, 'process:exited').filter((e) => e.role === 'archiver').at(-1);
  const restartedAfter = lastExit !== undefined && eventsOf(history, 'process:started').some((e) => e.role === 'archiver' && e.t > lastExit.t);
  if (!lastExit || !lastExit.expected || lastExit.code !== 0 || restartedAfter) return unknown('the archiver never stopped gracefully (exit 0 at the end of the run): no reading at rest');
  const rest = reads.at(-1);
  if (!rest || rest.t < lastExit.t) return unknown('no reading of the partitions after the archiver stopped');
  const passBy = lastExit.t - b.intervalMs - b.slackMs;
  const ref = reads.filter((r) => r.t <= passBy).at(-1);
  if (!ref) return unknown(`no reading of the partitions ${fmt(b.intervalMs + b.slackMs)} ms or more before the archiver stopped: no pass known to follow it`);

  const lo = dayOf(ref.dbTime!);
  const hi = dayOf(rest.dbTime!);
  const seen = new Set<number>();
  for (const r of reads) for (const p of r.partitions) {
    const d = partitionDay(p);
    if (d !== undefined) seen.add(d);
  }
  const atRest = new Set(rest.partitions.map(partitionDay).filter((d): d is number => d !== undefined));
  const sorted = [...seen].sort((x, y) => x - y);
  const pastRetention = sorted.filter((d) => d + 1 <= lo - b.retentionDays);
  const within = sorted.filter((d) => d >= hi - b.retentionDays);
  const ahead = days(hi, lo + b.partitionsAheadDays);
  const kept = pastRetention.filter((d) => atRest.has(d));
  const dropped = within.filter((d) => !atRest.has(d));
  const missing = ahead.filter((d) => !atRest.has(d));
  const judged = new Set([...pastRetention, ...within, ...ahead]).size;

  const steps = dbClockSteps(history);
  const stepped = steps.length ? `; the database clock stepped ${steps.map((s) => `${fmt((s.toMs - s.fromMs) / DAY_MS, 2)} days`).join(', ')}` : '';
  const figure =
    `${fmt(judged)} day partitions judged at rest (database day ${partitionName(hi).slice(13)}): ${fmt(pastRetention.length)} past retention (${fmt(kept.length)} still there), ` +
    `${fmt(within.length)} within it (${fmt(dropped.length)} dropped), ${fmt(ahead.length)} from today ahead (${fmt(missing.length)} missing)${stepped}`;
  const examples = [
    ...firstN(kept).map((d) => ({ pastRetentionStillThere: partitionName(d) })),
    ...firstN(dropped).map((d) => ({ withinRetentionDropped: partitionName(d) })),
    ...firstN(missing).map((d) => ({ aheadMissing: partitionName(d) })),
  ];
  const bad = kept.length + dropped.length + missing.length;
  if (bad === 0 && pastRetention.length === 0) {
    return { ...unknown(`${figure}; no partition had passed retention by the database clock: the situation did not happen`), judged: { n: judged, what: 'day partitions' } };
  }
  return { name, pass: bad === 0, figure, bound, judged: { n: judged, what: 'day partitions (past retention, within it, and ahead)' }, ...(examples.length ? { examples } : {}) };
}

export const archiveRetention: CheckerDef<ArchiveRetentionBounds> = {
  name: 'archive-retention',
  says: 'after the archiver\'s passes, day partitions past retentionDays are gone, none within it was dropped, and partitionsAheadDays ahead exist (read from the catalog)',
  check: checkArchiveRetention,
  bounds: { retentionDays: 'number', partitionsAheadDays: 'number', intervalMs: 'number', slackMs: 'number' },
  defaults: { retentionDays: ARCHIVE_DEFAULTS.retentionDays, partitionsAheadDays: ARCHIVE_DEFAULTS.partitionsAheadDays, intervalMs: ARCHIVE_DEFAULTS.intervalMs, slackMs: 5_000 },
};
