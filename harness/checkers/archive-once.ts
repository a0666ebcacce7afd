import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { JobIndex } from './jobs.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface ArchiveOnceBounds {
  /** The archiver's --archive-after-ms: a row may move only once its job finished this long before. */
  archiveAfterMs: number;
}

/**
 * The archiver's promise (engine/archive/archive.sql ArchiveBatch): a done
 * job older than archiveAfterMs moves from stampede.jobs to
 * stampede.job_history in one statement, so at every commit it is in exactly
 * one of them; only `done` rows move. Judged on the final state: no job id in
 * both tables, no archived row that is not done, no acknowledged job in
 * neither, and no row archived sooner than archiveAfterMs after it finished
 * (both instants on the database clock). Nothing archived: inconclusive.
 */
export function checkArchiveOnce(history: readonly HistoryEvent[], final: FinalState, bounds: ArchiveOnceBounds): InvariantResult {
  const hot = new Set<number>();
  const archived: FinalState['jobs'] = [];
  for (const j of final.jobs) (j.archived ? archived.push(j) : hot.add(j.id));
  const both = archived.filter((j) => hot.has(j.id)).map((j) => j.id);
  const notDone = archived.filter((j) => j.state !== 'done').map((j) => ({ jobId: j.id, state: j.state }));
  const young = archived
    .filter((j) => j.archivedAtMs !== undefined && j.finishedAtMs !== undefined && j.archivedAtMs - j.finishedAtMs < bounds.archiveAfterMs)
    .map((j) => ({ jobId: j.id, archivedAfterMs: j.archivedAtMs! - j.finishedAtMs! }));
  const idx = new JobIndex(history, final);
  const neither = [...idx.ops.values()].filter((r) => r.ok && !r.job).map((r) => ({ op: r.op, jobId: r.ok!.jobId }));
  const bad = both.length + notDone.length + young.length + neither.length;
  // Dead and cancelled jobs the archiver had to leave where they are (dead_letters references the dead ones).
  const leftBehind = final.jobs.filter((j) => !j.archived && (j.state === 'dead' || j.state === 'cancelled')).length;
  const figure =
    `${fmt(archived.length)} archived of ${fmt(final.jobs.length)} jobs (${fmt(leftBehind)} dead or cancelled left in place): ${fmt(both.length)} in both tables, ${fmt(neither.length)} acknowledged in neither, ` +
    `${fmt(notDone.length)} archived not done, ${fmt(young.length)} archived before ${fmt(bounds.archiveAfterMs)} ms`;
  const examples = [
    ...firstN(both).map((jobId) => ({ inBoth: jobId })),
    ...firstN(neither).map((n) => ({ inNeither: n })),
    ...firstN(notDone).map((n) => ({ archivedNotDone: n })),
    ...firstN(young).map((y) => ({ tooYoung: y })),
  ];
  const pass: boolean | 'unknown' = bad > 0 ? false : archived.length === 0 ? 'unknown' : true;
  const judged = { n: archived.length + leftBehind, what: 'archived jobs and dead or cancelled jobs it had to leave' };
  return { name: 'archive-once', pass, figure, judged, bound: `each job in exactly one table; archived only done, at least ${fmt(bounds.archiveAfterMs)} ms after it finished`, ...(examples.length ? { examples } : {}) };
}

export const archiveOnce: CheckerDef<ArchiveOnceBounds> = {
  name: 'archive-once',
  says: 'every job ends in exactly one of jobs and job_history; only done jobs older than the archiver\'s age move',
  check: checkArchiveOnce,
  bounds: { archiveAfterMs: 'number' },
  defaults: { archiveAfterMs: 0 },
};
