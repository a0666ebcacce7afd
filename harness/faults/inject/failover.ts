import { dbNowMs } from '../../db-clock/db-clock.ts';
import { portAnswers, processAlive } from '../../postgres/replica.ts';
import { evidence, holdUntil, injected, watchFor, type Injector } from './context.ts';

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
  const startedT = ctx.recorder.now();
  const before = await replica.state();
  // The database's time as the hold begins (the simulated clock where a db-clock-jump moved it): the cron
  // occurrences due from here to the promotion came due during the failover (harness/checkers/failover.ts).
  const heldDbMs = await dbNowMs(ctx.db);
  const heldT = ctx.recorder.now();
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
