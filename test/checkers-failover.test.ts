// The failover invariants (docs/failover.md) on hand-written histories: each
// passes on a good one, fails on a violating one (its negative control at
// unit level), and says unknown when no failover promoted a standby.
import { describe, expect, it } from 'vitest';
import { checkExactlyOneEffect } from '../harness/checkers/exactly-one-effect.ts';
import { checkFailoverAsync, checkFailoverSync, cronAcrossFailover, lostWrites, failoverFacts } from '../harness/checkers/failover.ts';
import { checkNoConcurrentClaim } from '../harness/checkers/no-concurrent-claim.ts';
import type { FinalState, HistoryEvent } from '../harness/history.ts';
import { h } from './support/history-builder.ts';

type Job = FinalState['jobs'][number];
const job = (id: number, op: number, state = 'done'): Job => ({ id, op, queue: 'default', state, attempts: 1, priority: 0, idempotencyKey: null, runAtMs: 0 });
const final = (jobs: Job[], effects: Record<string, number> = {}): FinalState => ({ jobs, deadLetters: [], effects });

const HELD_DB_MS = 3_601_000;

/** Held at 1 s, the standby's last replayed commit at 1.2 s, killed at 3 s, promoted at 3.5 s. */
function failover(mode: 'sync' | 'async', x: { sql?: number; gone?: boolean } = {}): HistoryEvent[] {
  return [
    // The database clock read 1 h + 1 s at the hold: from then to the promotion it runs to 1 h + 3.5 s.
    h.fault(1_000, 'failover', { seq: 0, replication: mode, heldDbMs: HELD_DB_MS }),
    h.fault(3_500, 'failover', { seq: 0, phase: 'end', promoted: true }),
    h.evidence(3_600, 'failover', {
      seq: 0, replication: mode, syncState: mode, killT: 3_000, promotedT: 3_500, oldPrimaryGone: x.gone ?? true, oldPortRefuses: true,
      lagBytes: 4_096, lagMs: 1_800, lastReplayedCommitT: 1_200, firstClaimAfterPromotionMs: 300,
    }),
    ...(x.sql !== undefined ? [h.evidence(9_000, 'failover', { seq: 0, sqlMissingEnqueues: x.sql, of: 3 })] : []),
  ];
}

/** Three enqueues (ops 1-3 as jobs 1-3), each completed; job 3 acknowledged at 2 s, after the standby's last replayed commit. */
const writes: HistoryEvent[] = [
  h.ok(500, 1, 1), h.claim(600, 1, 'w-0.1'), h.completed(700, 1, 'w-0.1'),
  h.ok(800, 2, 2), h.claim(900, 2, 'w-0.1'), h.completed(1_100, 2, 'w-0.1'),
  h.ok(2_000, 3, 3), h.claim(2_100, 3, 'w-0.1'), h.completed(2_200, 3, 'w-0.1'),
];
const sorted = (...parts: HistoryEvent[][]) => parts.flat().sort((a, b) => a.t - b.t);
const allKept = final([job(1, 1), job(2, 2), job(3, 3)]);

describe('failover-sync', () => {
  it('passes when every acknowledged write is on the promoted primary', () => {
    const r = checkFailoverSync(sorted(failover('sync'), writes), allKept);
    expect(r.pass).toBe(true);
    expect(r.judged.n).toBe(9); // 3 enqueues, 3 claims, 3 completions
  });

  it('fails on an acknowledged enqueue the promoted primary lacks, naming it', () => {
    const r = checkFailoverSync(sorted(failover('sync'), writes), final([job(1, 1), job(2, 2)]));
    expect(r.pass).toBe(false);
    expect(JSON.stringify(r.examples)).toContain('"kind":"enqueue lost","write":"enqueue","jobId":3');
  });

  it('is unknown with no failover, with the other mode, or with the old primary not shown gone', () => {
    expect(checkFailoverSync(writes, allKept).pass).toBe('unknown');
    expect(checkFailoverSync(sorted(failover('async'), writes), allKept).pass).toBe('unknown');
    expect(checkFailoverSync(sorted(failover('sync', { gone: false }), writes), allKept).pass).toBe('unknown');
  });
});

describe('failover-async', () => {
  it('passes when each lost write was acknowledged inside the lag window and the SQL count agrees', () => {
    // Job 3's enqueue lost; the promoted primary gave id 3 to another offer: an id reused, counted as a lost enqueue.
    const r = checkFailoverAsync(sorted(failover('async', { sql: 1 }), writes), final([job(1, 1), job(2, 2), job(3, 9, 'pending')]));
    expect(r.pass).toBe(true);
    expect(r.figure).toContain('1 id reused');
  });

  it('fails on a loss acknowledged before the standby\'s last replayed commit: the lag does not explain it', () => {
    // Job 2's completion (acknowledged at 1.1 s) undone: it ran again after the promotion.
    const rerun = sorted(failover('async', { sql: 0 }), writes, [h.claim(4_000, 2, 'w-1.1')]);
    const r = checkFailoverAsync(rerun, allKept);
    expect(r.pass).toBe(false);
    expect(JSON.stringify(r.examples)).toContain('"unexplained":{"kind":"completion undone and rerun","write":"completion","jobId":2');
  });

  it('fails on a loss acknowledged after the promotion', () => {
    const late = sorted(failover('async', { sql: 0 }), writes, [h.ok(4_000, 4, 4)]);
    expect(checkFailoverAsync(late, allKept).pass).toBe(false);
  });

  it('fails when the SQL count disagrees, and is unknown without it', () => {
    const lost3 = final([job(1, 1), job(2, 2)]);
    expect(checkFailoverAsync(sorted(failover('async', { sql: 2 }), writes), lost3).pass).toBe(false);
    expect(checkFailoverAsync(sorted(failover('async'), writes), lost3).pass).toBe('unknown');
    expect(checkFailoverAsync(sorted(failover('async', { sql: 1 }), writes), lost3).pass).toBe(true);
  });

  it('lists an effect applied twice and a completion undone by kind', () => {
    const effects: HistoryEvent[] = [
      { t: 2_150, node: 'w-0.1', type: 'effect:applied', jobId: 3, key: 'op:3', workerId: 'w-0.1' },
      h.claim(5_000, 3, 'w-1.1', 1),
      { t: 5_050, node: 'w-1.1', type: 'effect:applied', jobId: 3, key: 'op:3', workerId: 'w-1.1' },
    ];
    const history = sorted(failover('async', { sql: 0 }), writes, effects);
    const { lost } = lostWrites(history, final([job(1, 1), job(2, 2), job(3, 3)], { 'op:3': 1 }), failoverFacts(history)!);
    expect(lost.map((l) => [l.kind, l.jobId, l.inLagWindow])).toEqual([
      ['effect ran twice', 3, true],
      ['completion undone and rerun', 3, true],
    ]);
  });

  it('lists a claim the promoted primary never had, made again with the same attempt under another token', () => {
    const claims: HistoryEvent[] = [h.token(h.claim(2_050, 7, 'w-0.1'), 'a'), h.token(h.claim(4_000, 7, 'w-1.1'), 'b')];
    const history = sorted(failover('async', { sql: 0 }), writes, claims);
    const { lost } = lostWrites(history, final([job(1, 1), job(2, 2), job(3, 3), job(7, 7)]), failoverFacts(history)!);
    expect(lost.map((l) => [l.kind, l.write, l.jobId, l.inLagWindow])).toEqual([['claim undone and made again', 'claim', 7, true]]);
  });
});

describe('checks that leave out the failover\'s listed losses (exceptFailoverLosses)', () => {
  // Job 7's claim by w-0.1 was lost with the primary and w-1.1 claimed attempt 1 again: two holders at once, listed.
  const lostClaim: HistoryEvent[] = [h.token(h.claim(2_050, 7, 'w-0.1'), 'a'), h.token(h.claim(4_000, 7, 'w-1.1'), 'b')];
  // Job 3's effect, acknowledged in the lag window, ran again after the promotion.
  const twice: HistoryEvent[] = [
    { t: 2_150, node: 'w-0.1', type: 'effect:applied', jobId: 3, key: 'op:3', workerId: 'w-0.1' },
    { t: 5_050, node: 'w-1.1', type: 'effect:applied', jobId: 3, key: 'op:3', workerId: 'w-1.1' },
  ];
  const kept = final([job(1, 1), job(2, 2), job(3, 3), job(7, 7)], { 'op:3': 2, 'op:1': 1 });

  it('no-concurrent-claim judges every other job, and still fails on an overlap of a job the failover did not list', () => {
    const history = sorted(failover('async', { sql: 0 }), writes, lostClaim);
    expect(checkNoConcurrentClaim(history, kept, { leaseMs: 8_000 }).pass).toBe(false);
    const r = checkNoConcurrentClaim(history, kept, { leaseMs: 8_000, exceptFailoverLosses: true });
    expect(r.pass).toBe(true);
    expect(r.judged.n).toBe(3);
    expect(r.figure).toContain('2 claims of 1 jobs left out');
    // Negative control: job 2 held by two workers at once, in no listed loss.
    const overlap = sorted(history, [h.claim(1_000, 2, 'w-1.1', 2)]);
    expect(checkNoConcurrentClaim(overlap, kept, { leaseMs: 8_000, exceptFailoverLosses: true }).pass).toBe(false);
  });

  it('exactly-one-effect judges every other key, and still fails on a duplicate the failover did not list', () => {
    const history = sorted(failover('async', { sql: 0 }), writes, twice);
    const kinds = { kinds: ['normal'] };
    expect(checkExactlyOneEffect(history, kept, kinds).pass).toBe(false);
    const r = checkExactlyOneEffect(history, kept, { ...kinds, exceptFailoverLosses: true });
    expect(r.pass).toBe(true);
    expect(r.figure).toContain('1 keys left out');
    expect(r.judged.n).toBe(1);
    expect(checkExactlyOneEffect(history, final(kept.jobs, { 'op:3': 2, 'op:1': 2 }), { ...kinds, exceptFailoverLosses: true }).pass).toBe(false);
  });
});

describe('cron occurrences across the failover', () => {
  // A minutely occurrence at 1 h + 2 s on the database clock (inside the hold), as job 5; another at 1 h + 60 s (after).
  const inside = `cron:m:${new Date(3_602_000).toISOString()}`;
  const after = `cron:m:${new Date(3_660_000).toISOString()}`;
  const cronJob = (id: number, key: string): Job => ({ ...job(id, 0), idempotencyKey: key });
  const cronFinal = final([job(1, 1), job(2, 2), job(3, 3), cronJob(5, inside), cronJob(6, after)], { [inside]: 1 });
  const ranOnce: HistoryEvent[] = [
    h.claim(3_700, 5, 'w-1.1'), { t: 3_750, node: 'w-1.1', type: 'effect:applied', jobId: 5, key: inside, workerId: 'w-1.1' }, h.completed(3_800, 5, 'w-1.1'),
  ];
  // Under async: claimed, run and completed on the old primary at 2.0-2.1 s, lost, and run again after the promotion.
  const ranTwice: HistoryEvent[] = [
    h.claim(2_000, 5, 'w-0.1'), { t: 2_050, node: 'w-0.1', type: 'effect:applied', jobId: 5, key: inside, workerId: 'w-0.1' }, h.completed(2_100, 5, 'w-0.1'),
    ...ranOnce,
  ];

  it('counts the occurrences due from the hold to the promotion, and those that fired twice', () => {
    const history = sorted(failover('async', { sql: 0 }), writes, ranTwice);
    const f = failoverFacts(history)!;
    const c = cronAcrossFailover(history, cronFinal, f, lostWrites(history, cronFinal, f).lost);
    expect(c).toEqual({ due: [inside], firedTwice: [inside] });
    const r = checkFailoverAsync(history, cronFinal, { minCronDue: 1 });
    expect(r.pass).toBe(true);
    expect(r.figure).toContain('2 cron occurrence fired twice');
    expect(r.figure).toContain('cron: 1 occurrences came due during the failover, 1 fired twice');
  });

  it('failover-sync passes on an occurrence due in the hold that ran once, fails on one that fired twice', () => {
    const once = checkFailoverSync(sorted(failover('sync'), writes, ranOnce), cronFinal, { minCronDue: 1 });
    expect(once.pass).toBe(true);
    expect(once.figure).toContain('cron: 1 occurrences came due during the failover, 0 fired twice');
    const twice = checkFailoverSync(sorted(failover('sync'), writes, ranTwice), cronFinal, { minCronDue: 1 });
    expect(twice.pass).toBe(false);
    expect(JSON.stringify(twice.examples)).toContain('"kind":"cron occurrence fired twice"');
  });

  it('is unknown when fewer occurrences came due than the scenario asked for: the cron part judged nothing', () => {
    const none = final([job(1, 1), job(2, 2), job(3, 3), cronJob(6, after)]);
    const r = checkFailoverSync(sorted(failover('sync'), writes), none, { minCronDue: 1 });
    expect(r.pass).toBe('unknown');
    expect(r.figure).toContain('cron: 0 occurrences came due during the failover');
    expect(checkFailoverSync(sorted(failover('sync'), writes), none).pass).toBe(true);
  });
});
