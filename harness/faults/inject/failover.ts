import { dbNowMs } from '../../db-clock/db-clock.ts';
import { DEFAULT_FAILOVER_LAG_S } from '../spec.ts';
import { portAnswers, processAlive } from '../../postgres/replica.ts';
import { evidence, holdUntil, injected, watchFor, type Injector } from './context.ts';

/** The longest a failover timed `onMinute` waits for the database's next minute before holding the link anyway. */
const MAX_MINUTE_WAIT_MS = 15_000;

/** How long after the promotion the first claim is waited for, as the recovery time. */
const RESUME_WAIT_MS = 30_000;

/**
 * A failover of the run's own Postgres (docs/failover.md). The replication
 * link is held for lagS seconds: the standby receives no WAL, so under async
 * replication the primary goes on acknowledging commits the standby lacks,
 * and under sync every commit waits for it. Then the primary is SIGKILLed
 * (every server process, as a host lost), the standby is promoted with
 * pg_promote, and the VIP every client connects through is re-pointed at it.
 *
 * Recorded: `fault:injected` at the hold (with the primary's view of the
 * standby: mode, bytes behind, lag) and at the promotion (`phase: 'end'`);
 * `fault:evidence` with the kill (the old postmaster's pid gone, its port
 * refusing), the lag at the promotion (bytes of WAL the standby had not
 * replayed, and the commit time of the last transaction it had, as harness
 * time: the lag window's start), the promotion's time and how long until the
 * first claim after it.
 */
export const failover: Injector = async (action, ctx) => {
  const replica = ctx.replica;
  if (!replica) {
    const why = 'failover needs the streaming replica the runner starts beside its own embedded server; this run has none (a server from DATABASE_URL or a container)';
    ctx.log.warn(why);
    injected(ctx, action, { skipped: why });
    return;
  }
  const lagMs = ((action.params.lagS as number | undefined) ?? DEFAULT_FAILOVER_LAG_S) * 1000;
  // The database's time (the simulated clock where a db-clock-jump moved it): the cron occurrences due from the
  // hold to the promotion came due during the failover (harness/checkers/failover.ts). The clock runs at the
  // real rate meanwhile, so one reading dates the hold.
  const dbReadT = ctx.recorder.now();
  const dbMs = await dbNowMs(ctx.db);
  if (action.params.onMinute === true) {
    // Timed against the database clock: the hold starts half the lag before the next minute, so a cron minute
    // comes due in the middle of the lag window, however late a loaded machine ran this action.
    const waitMs = Math.ceil((dbMs + lagMs / 2) / 60_000) * 60_000 - lagMs / 2 - dbMs - (ctx.recorder.now() - dbReadT);
    if (waitMs <= MAX_MINUTE_WAIT_MS) await ctx.clock.sleep(Math.max(0, waitMs), ctx.signal).catch(() => {});
    else ctx.log.warn('the next database minute is too far to hold the link around it; holding now', { waitMs: Math.round(waitMs) });
  }
  const startedT = ctx.recorder.now();
  const before = await replica.state();
  const heldT = ctx.recorder.now();
  const heldDbMs = dbMs + (heldT - dbReadT);
  replica.link.setShape(['toServer', 'toClient'], { held: true });
  injected(ctx, action, { replication: replica.mode, lagS: action.params.lagS, replicationBefore: before, heldDbMs }, heldT);
  await holdUntil(ctx, action, startedT);
  if (ctx.signal.aborted) {
    replica.link.setShape(['toServer', 'toClient'], { held: false });
    injected(ctx, action, { phase: 'end', interrupted: true });
    return;
  }

  const atKill = await replica.state();
  const pid = replica.primary.pid;
  await replica.primary.crash();
  const killT = ctx.recorder.now();
  // The held WAL dies with the connection: what the standby has now is all it will have.
  replica.link.reset();
  const position = await replica.standbyPosition(atKill.primaryLsn);
  await replica.promote();
  const connectionsMoved = replica.repointVip();
  const promotedT = ctx.recorder.now();
  await replica.link.close();
  injected(ctx, action, { phase: 'end', promoted: true });
  // The embedded server's clock is this machine's, as the harness's is: a database time is a harness time less
  // the epoch of the run's t = 0, read at one instant (not across an await, which a busy event loop stretches).
  const epochOfT0 = ctx.clock.now() - ctx.recorder.now();
  const lastReplayedCommitT = position.lastReplayedCommitMs === null ? null : position.lastReplayedCommitMs - epochOfT0;
  const resumed = await watchFor(ctx, (e) => e.type === 'job:claimed' && e.t > promotedT, RESUME_WAIT_MS);
  evidence(ctx, action, {
    replication: replica.mode,
    syncState: atKill.syncState,
    synchronousCommit: atKill.synchronousCommit,
    killedPid: pid,
    killT,
    oldPrimaryGone: pid !== undefined && !processAlive(pid),
    oldPortRefuses: !(await portAnswers(replica.primary.listenPort)),
    primaryLsnAtKill: atKill.primaryLsn,
    standbyReplayLsn: position.replayLsn,
    standbyReceiveLsn: position.receiveLsn,
    lagBytes: position.behindBytes,
    lagMs: position.lastReplayedCommitMs === null ? null : atKill.atMs - position.lastReplayedCommitMs,
    primaryReplayLagMs: atKill.replayLagMs,
    lastReplayedCommitMs: position.lastReplayedCommitMs,
    lastReplayedCommitT,
    promotedT,
    promoteMs: promotedT - killT,
    connectionsMoved,
    firstClaimAfterPromotionMs: resumed ? resumed.t - promotedT : null,
  });
};
