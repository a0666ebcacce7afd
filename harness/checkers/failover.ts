import type { EventOf, FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { parseOccurrenceKey } from './cron-occurrence.ts';
import { sameHold, type HoldReport } from './lives.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

/**
 * What a failover's records say happened (harness/faults/inject/failover.ts):
 * the mode, the kill, the promotion, the lag at the promotion, and the
 * independent SQL count of acknowledged enqueues missing after it.
 */
export interface FailoverFacts {
  replication: 'sync' | 'async';
  /** The replication link was held from here (harness time). */
  heldT: number;
  /** The database's time then (epoch ms, the simulated clock where one was stepped); null in older stored runs. */
  heldDbMs: number | null;
  killT: number;
  promotedT: number;
  /** The old primary's postmaster was gone and its port refused connections after the kill. */
  primaryGone: boolean;
  /** The primary reported the standby in this mode just before the kill (`sync`, `async`). */
  syncState: string | null;
  lagBytes: number | null;
  lagMs: number | null;
  /** Commit time of the last transaction the standby had replayed, as harness time: before it, nothing can be lost. */
  lastReplayedCommitT: number | null;
  firstClaimAfterPromotionMs: number | null;
  /** Acknowledged enqueues with no row on the promoted primary, counted by SQL there; undefined when not counted. */
  sqlMissingEnqueues?: number;
}

/** The failover of the run, when it promoted the standby; null otherwise. */
export function failoverFacts(history: readonly HistoryEvent[]): FailoverFacts | null {
  const marks = history.filter((e): e is Extract<HistoryEvent, { type: 'fault:injected' }> => e.type === 'fault:injected' && e.fault === 'failover');
  const start = marks.find((e) => e.detail.phase === undefined && e.detail.skipped === undefined);
  const end = marks.find((e) => e.detail.promoted === true);
  const ev = history.filter((e): e is Extract<HistoryEvent, { type: 'fault:evidence' }> => e.type === 'fault:evidence' && e.fault === 'failover');
  const kill = ev.find((e) => e.detail.killT !== undefined)?.detail;
  if (!start || !end || !kill) return null;
  const count = ev.find((e) => e.detail.sqlMissingEnqueues !== undefined)?.detail;
  const num = (v: unknown) => (typeof v === 'number' ? v : null);
  return {
    replication: kill.replication as 'sync' | 'async',
    heldT: start.t,
    heldDbMs: num(start.detail.heldDbMs),
    killT: Number(kill.killT),
    promotedT: Number(kill.promotedT),
    primaryGone: kill.oldPrimaryGone === true && kill.oldPortRefuses === true,
    syncState: (kill.syncState as string | null) ?? null,
    lagBytes: num(kill.lagBytes),
    lagMs: num(kill.lagMs),
    lastReplayedCommitT: num(kill.lastReplayedCommitT),
    firstClaimAfterPromotionMs: num(kill.firstClaimAfterPromotionMs),
    ...(count ? { sqlMissingEnqueues: Number(count.sqlMissingEnqueues) } : {}),
  };
}

export type LostKind = 'enqueue lost' | 'id reused' | 'claim undone and made again' | 'completion undone and rerun' | 'effect ran twice' | 'effect lost' | 'cron occurrence fired twice';

/** The acknowledged writes a failover can lose, by what the client wrote. */
export type AckedWrite = 'enqueue' | 'claim' | 'completion' | 'effect';

/** One acknowledged write the database no longer has, or had to redo. */
export interface LostWrite {
  kind: LostKind;
  /** Which write it was (a cron occurrence fired twice is a completion's or an effect's). */
  write: AckedWrite;
  jobId: number;
  /** The effect's key, for an effect's loss. */
  key?: string;
  /** When the client heard the commit (harness time). */
  ackedT: number;
  /** Acknowledged after the last commit the standby had replayed and before the promotion: the replication lag explains it. */
  inLagWindow: boolean;
  detail?: string;
}

/** How far before the standby's last replayed commit an acknowledgement may be recorded and still be in the lag window: the two clocks are read a query apart. */
const WINDOW_SLACK_MS = 50;

/**
 * Every acknowledged write of the run, against the promoted primary's final
 * state and what ran after. Acknowledged means the client heard its commit:
 * `enqueue:ok` (the producer's INSERT returned), `job:completed` (the
 * worker's completing UPDATE returned the job's id), `effect:applied` (the
 * effect's transaction committed). Lost:
 * - an enqueue with no row of its id, or a row of its id holding another
 *   offer (the id was handed out again: `id reused`);
 * - a claim (`job:claimed`: the claiming UPDATE returned the job) made
 *   before the promotion and made again after it with the same attempt
 *   number under another fencing token, its hold not handed back: the
 *   promoted primary never had the first claim, so a second holder ran the
 *   job beside the first until the first's renewal was refused (`claim
 *   undone and made again`);
 * - a completion whose job did not end done, or was claimed again after it
 *   (`completion undone and rerun`; `cron occurrence fired twice` when the
 *   job is a cron occurrence);
 * - an effect applied again after it was acknowledged (`effect ran twice`:
 *   the handler's outside work ran twice; `cron occurrence fired twice` when
 *   its key is a cron occurrence's), or with no row at the end.
 * Pure.
 */
export function lostWrites(history: readonly HistoryEvent[], final: FinalState, f: FailoverFacts): { acknowledged: Record<AckedWrite, number>; lost: LostWrite[] } {
  const jobs = new Map(final.jobs.map((j) => [j.id, j]));
  const claims = new Map<number, { e: EventOf<'job:claimed'>; i: number }[]>();
  const handedBack: { e: HistoryEvent & HoldReport; i: number }[] = [];
  const applied = new Map<string, number[]>();
  history.forEach((e, i) => {
    if (e.type === 'job:claimed') (claims.get(e.jobId) ?? claims.set(e.jobId, []).get(e.jobId)!).push({ e, i });
    if (e.type === 'lease:released' || e.type === 'job:deferred') handedBack.push({ e, i });
    if (e.type === 'effect:applied') (applied.get(e.key) ?? applied.set(e.key, []).get(e.key)!).push(e.t);
  });
  const windowFrom = (f.lastReplayedCommitT ?? f.killT) - WINDOW_SLACK_MS;
  const lost: LostWrite[] = [];
  const lose = (kind: LostKind, write: AckedWrite, jobId: number, ackedT: number, detail: string, key?: string) =>
    lost.push({ kind, write, jobId, ...(key !== undefined ? { key } : {}), ackedT, inLagWindow: ackedT >= windowFrom && ackedT <= f.promotedT, detail });
  const cron = (key: string | null | undefined) => key?.startsWith('cron:') === true;
  const acknowledged = { enqueue: 0, claim: 0, completion: 0, effect: 0 };
  history.forEach((e, i) => {
    if (e.type === 'enqueue:ok') {
      acknowledged.enqueue++;
      const row = jobs.get(e.jobId);
      if (!row) lose('enqueue lost', 'enqueue', e.jobId, e.t, `offer ${e.op}: no job ${e.jobId} on the promoted primary`);
      else if (row.op !== undefined && row.op !== e.op) lose('id reused', 'enqueue', e.jobId, e.t, `offer ${e.op} was acknowledged as job ${e.jobId}; the promoted primary gave that id to offer ${row.op}`);
    } else if (e.type === 'job:claimed') {
      acknowledged.claim++;
      if (e.t > f.promotedT || e.leaseToken === undefined) return;
      // Made again with the same attempt number after the promotion, under another token: the first claim's
      // attempt was never counted there. A hold handed back (uncharged) is re-claimed at its attempt legitimately.
      const again = (claims.get(e.jobId) ?? []).find((c) => c.i > i && c.e.t > f.promotedT && c.e.attempt === e.attempt && !sameHold(c.e, e));
      if (!again || handedBack.some((h) => h.i > i && h.i < again.i && sameHold(e, h.e))) return;
      lose('claim undone and made again', 'claim', e.jobId, e.t, `attempt ${e.attempt} claimed again by ${again.e.workerId} ${fmt(again.e.t - e.t)} ms later, while ${e.workerId} held it`);
    } else if (e.type === 'job:completed') {
      acknowledged.completion++;
      const row = jobs.get(e.jobId);
      const again = (claims.get(e.jobId) ?? []).find((c) => c.e.t > e.t)?.e.t;
      if (again === undefined && row?.state === 'done') return;
      const kind = cron(row?.idempotencyKey) ? 'cron occurrence fired twice' : 'completion undone and rerun';
      lose(kind, 'completion', e.jobId, e.t, again !== undefined ? `claimed again ${fmt(again - e.t)} ms after its completion was acknowledged` : `ended ${row?.state ?? 'missing'}`);
    } else if (e.type === 'effect:applied') {
      acknowledged.effect++;
      const again = (applied.get(e.key) ?? []).find((t) => t > e.t);
      if (again !== undefined) lose(cron(e.key) ? 'cron occurrence fired twice' : 'effect ran twice', 'effect', e.jobId, e.t, `effect ${e.key} applied again ${fmt(again - e.t)} ms later`, e.key);
      else if ((final.effects[e.key] ?? 0) === 0) lose('effect lost', 'effect', e.jobId, e.t, `no row for effect ${e.key}`, e.key);
    }
  });
  return { acknowledged, lost };
}

/**
 * What a failover excuses other checks from judging: the jobs and effect keys
 * of every acknowledged write it lost, each listed with its cause by
 * `lostWrites` (and judged there: inside the lag window under asynchronous
 * replication, none at all under synchronous). Null when no failover
 * promoted a standby: nothing is excused.
 */
export function failoverExcused(history: readonly HistoryEvent[], final: FinalState): { jobIds: Set<number>; keys: Set<string>; writes: number } | null {
  const f = failoverFacts(history);
  if (!f) return null;
  const { lost } = lostWrites(history, final, f);
  return { jobIds: new Set(lost.map((l) => l.jobId)), keys: new Set(lost.flatMap((l) => (l.key !== undefined ? [l.key] : []))), writes: lost.length };
}

/** The cron occurrences that came due during a failover, and those of them that fired twice. */
export interface CronAcrossFailover {
  /** Occurrence keys whose instant, on the database clock, fell from the hold to the promotion. */
  due: string[];
  /** Of those, the ones a lost write shows run twice (`cron occurrence fired twice`). */
  firedTwice: string[];
}

/**
 * The cron part of a failover's judgement: every occurrence whose instant
 * fell while the primary was failing over (from the hold, read on the
 * database clock, to the promotion: the clock runs at its real rate between
 * them), from the final rows and from the effects the run saw applied (a row
 * the failover lost and no scheduler wrote again is still counted). Under
 * asynchronous replication such an occurrence was claimed, run and completed
 * on the old primary inside the lag window, and the promoted standby still has
 * its row pending (written a lookahead earlier) or none (the schedulers write
 * it again under the same key): either way it runs again there, and the one
 * row left shows it once. Fired twice: a lost write of it listed as `cron
 * occurrence fired twice`. Pure.
 */
export function cronAcrossFailover(history: readonly HistoryEvent[], final: FinalState, f: FailoverFacts, lost: readonly LostWrite[]): CronAcrossFailover {
  if (f.heldDbMs === null) return { due: [], firedTwice: [] };
  const fromMs = f.heldDbMs;
  const toMs = f.heldDbMs + (f.promotedT - f.heldT);
  const keys = new Set<string>();
  const jobOf = new Map<number, string>();
  for (const j of final.jobs) if (j.idempotencyKey?.startsWith('cron:')) (keys.add(j.idempotencyKey), jobOf.set(j.id, j.idempotencyKey));
  for (const e of history) if (e.type === 'effect:applied' && e.key.startsWith('cron:')) keys.add(e.key);
  const due = [...keys].filter((k) => {
    const occ = parseOccurrenceKey(k);
    return occ !== undefined && occ.instantMs >= fromMs && occ.instantMs <= toMs;
  }).sort();
  const twice = new Set(lost.filter((l) => l.kind === 'cron occurrence fired twice').map((l) => l.key ?? jobOf.get(l.jobId)));
  return { due, firedTwice: due.filter((k) => twice.has(k)) };
}

/** Lost acknowledged enqueues: what the independent SQL count counts. */
export function lostEnqueueCount(lost: readonly LostWrite[]): number {
  return lost.filter((l) => l.kind === 'enqueue lost' || l.kind === 'id reused').length;
}

type Mode = 'sync' | 'async';

/** The shared first steps: the failover happened, in the mode the scenario asked, with the old primary gone. */
function judgeable(history: readonly HistoryEvent[], final: FinalState, bounds: FailoverBounds, mode: Mode, name: string, bound: string) {
  const what = 'acknowledged enqueues, claims, completions and effects across the failover';
  const base = { name, bound };
  const f = failoverFacts(history);
  const unknown = (figure: string) => ({ verdict: { ...base, pass: 'unknown' as const, figure, judged: { n: 0, what } } });
  if (!f) return unknown('no failover promoted a standby: nothing to judge');
  if (f.replication !== mode || f.syncState !== mode) return unknown(`the failover ran with ${f.replication} replication (the primary reported ${f.syncState ?? 'no standby'}), not ${mode}`);
  if (!f.primaryGone) return unknown('the old primary was not shown gone after the kill (its process alive or its port answering)');
  const { acknowledged, lost } = lostWrites(history, final, f);
  const n = acknowledged.enqueue + acknowledged.claim + acknowledged.completion + acknowledged.effect;
  const lag = `lag at the promotion ${f.lagBytes === null ? '?' : fmt(f.lagBytes)} bytes, ${f.lagMs === null ? '?' : fmt(f.lagMs)} ms`;
  const c = cronAcrossFailover(history, final, f, lost);
  const cron = `; cron: ${fmt(c.due.length)} occurrences came due during the failover, ${fmt(c.firedTwice.length)} fired twice`;
  // The cron part judged nothing: a scenario that asked for occurrences in the failover cannot pass on the rest alone.
  const cronUnjudged = c.due.length < bounds.minCronDue ? `; fewer than the ${fmt(bounds.minCronDue)} asked for: the cron part is not judged` : '';
  return { f, lost, n, what, base, lag: `${lag}${cron}${cronUnjudged}`, acknowledged, cronUnjudged: cronUnjudged !== '' };
}

export interface FailoverBounds {
  /** At least this many cron occurrences must come due from the hold to the promotion, or the verdict is unknown. Default 0. */
  minCronDue: number;
}

const listed = (lost: readonly LostWrite[]) => firstN([...lost]).map((l) => ({ lost: l }));

/**
 * Synchronous replication: every acknowledged enqueue, completion and effect
 * survives the failover: 0 lost. Unknown when no failover promoted a standby,
 * the primary did not report the standby as synchronous, or the old primary
 * was not shown gone.
 */
export function checkFailoverSync(history: readonly HistoryEvent[], final: FinalState, bounds: FailoverBounds = FAILOVER_DEFAULTS): InvariantResult {
  const j = judgeable(history, final, bounds, 'sync', 'failover-sync', '0 acknowledged writes lost');
  if ('verdict' in j) return j.verdict!;
  const { lost, n, what, base, lag, acknowledged, cronUnjudged } = j;
  const figure = `${fmt(lost.length)} of ${fmt(n)} acknowledged writes lost (${fmt(acknowledged.enqueue)} enqueues, ${fmt(acknowledged.claim)} claims, ${fmt(acknowledged.completion)} completions, ${fmt(acknowledged.effect)} effects); ${lag}`;
  return { ...base, pass: lost.length > 0 ? false : n === 0 || cronUnjudged ? 'unknown' : true, figure, judged: { n, what }, ...(lost.length ? { examples: listed(lost) } : {}) };
}

/**
 * Asynchronous replication: every acknowledged write lost is listed by id and
 * kind, and each is explained by the lag measured at the promotion: it was
 * acknowledged after the last commit the standby had replayed and before the
 * promotion. A loss outside that window is unbounded (the replica's lag does
 * not explain it) and fails. The list's count of lost enqueues must equal the
 * independent SQL count on the promoted primary; unknown when that count is
 * missing.
 */
export function checkFailoverAsync(history: readonly HistoryEvent[], final: FinalState, bounds: FailoverBounds = FAILOVER_DEFAULTS): InvariantResult {
  const j = judgeable(history, final, bounds, 'async', 'failover-async', 'every lost write acknowledged within the lag window; lost enqueues = the SQL count');
  if ('verdict' in j) return j.verdict!;
  const { f, lost, n, what, base, lag, cronUnjudged } = j;
  const unexplained = lost.filter((l) => !l.inLagWindow);
  const enqueues = lostEnqueueCount(lost);
  const byKind = [...new Set(lost.map((l) => l.kind))].map((k) => `${fmt(lost.filter((l) => l.kind === k).length)} ${k}`).join(', ');
  const sql = f.sqlMissingEnqueues === undefined ? 'no SQL count' : `SQL count of missing acknowledged enqueues ${fmt(f.sqlMissingEnqueues)}`;
  const figure = `${fmt(lost.length)} of ${fmt(n)} acknowledged writes lost${byKind ? ` (${byKind})` : ''}, ${fmt(unexplained.length)} outside the lag window; ${lag}; ${fmt(enqueues)} lost enqueues, ${sql}`;
  const examples = [...firstN(unexplained).map((l) => ({ unexplained: l })), ...listed(lost)];
  const result = { ...base, figure, judged: { n, what }, ...(examples.length ? { examples } : {}) };
  if (unexplained.length > 0) return { ...result, pass: false };
  if (f.sqlMissingEnqueues === undefined) return { ...result, pass: 'unknown' };
  if (f.sqlMissingEnqueues !== enqueues) return { ...result, pass: false };
  return { ...result, pass: n === 0 || cronUnjudged ? 'unknown' : true };
}

const FAILOVER_DEFAULTS: FailoverBounds = { minCronDue: 0 };

export const failoverSync: CheckerDef<FailoverBounds> = {
  name: 'failover-sync',
  says: 'with synchronous replication, every acknowledged enqueue, completion and effect survives a failover: 0 lost',
  check: checkFailoverSync,
  bounds: { minCronDue: 'number' },
  defaults: FAILOVER_DEFAULTS,
};

export const failoverAsync: CheckerDef<FailoverBounds> = {
  name: 'failover-async',
  says: 'with asynchronous replication, every acknowledged write a failover loses is listed by id and kind, acknowledged within the lag measured at the promotion, and the lost enqueues equal an independent SQL count',
  check: checkFailoverAsync,
  bounds: { minCronDue: 'number' },
  defaults: FAILOVER_DEFAULTS,
};
