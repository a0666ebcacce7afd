import { appendFileSync, cpSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import type { Clock } from '../../engine/clock.ts';
import type { Logger } from '../../engine/log.ts';
import type { Rng } from '../../engine/rng.ts';
import { loadQueries } from '../../engine/sql.ts';
import { LinkProxy } from '../faults/proxy.ts';
import { EmbeddedPostgres } from './embedded.ts';

/**
 * A streaming replica of the run's own embedded Postgres, and the address
 * every client of the run connects to (docs/failover.md).
 *
 * The standby is a copy of the primary's data directory taken while the
 * primary was stopped cleanly (before the run created its database: the
 * database, the migrations and the load reach the standby by streaming),
 * with `standby.signal`, a `primary_conninfo` and a replication slot
 * reserved before the copy, so the primary keeps every WAL segment the
 * standby has not received. Only the embedded binaries are needed (no
 * pg_basebackup). The standby streams through a LinkProxy of the harness's
 * own, the replication link, which the failover fault holds to make the
 * standby fall behind.
 *
 * `vip` plays the user's virtual IP, pgbouncer or haproxy: every worker,
 * scheduler, producer and the harness's own pool connect through it; after
 * the promotion it points new connections at the new primary.
 */

export type ReplicationMode = 'sync' | 'async';
/** The standby's application_name: what synchronous_standby_names and pg_stat_replication call it. */
export const STANDBY_NAME = 'stampede_standby';

const q = loadQueries(new URL('./replication.sql', import.meta.url), [
  'CreateStandbySlot',
  'SetSynchronousStandby',
  'ReloadConf',
  'ReplicationState',
  'StandbyPosition',
  'Promote',
  'MissingAcknowledgedEnqueues',
]);

/** The primary's view of the standby (pg_stat_replication), at one moment. */
export interface ReplicationState {
  /** `streaming` when connected; null when the standby is not connected. */
  state: string | null;
  /** `sync` or `async` (null when not connected). */
  syncState: string | null;
  primaryLsn: string;
  replayLsn: string | null;
  writeBehindBytes: number | null;
  flushBehindBytes: number | null;
  replayBehindBytes: number | null;
  writeLagMs: number | null;
  replayLagMs: number | null;
  synchronousStandbyNames: string;
  synchronousCommit: string;
  /** The primary's clock_timestamp(), epoch ms. */
  atMs: number;
}

/** The standby's own position. */
export interface StandbyPosition {
  inRecovery: boolean;
  receiveLsn: string | null;
  replayLsn: string | null;
  /** Commit time (the primary's clock, epoch ms) of the last transaction replayed. */
  lastReplayedCommitMs: number | null;
  /** Bytes of WAL the standby had not replayed of the primary's position given. */
  behindBytes: number | null;
  atMs: number;
}

/** One statement on a short connection of its own (the admin URL; outside every pool). */
async function once(url: string, sql: string, params: unknown[] = []): Promise<Record<string, any>[]> {
  const c = new pg.Client({ connectionString: url, application_name: 'stampede:harness:replica', connectionTimeoutMillis: 5_000 });
  c.on('error', () => {});
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end().catch(() => {});
  }
}

/** True when something accepts a TCP connection on the loopback port. */
export function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** True while a process of that pid exists. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface ReplicaOptions {
  mode: ReplicationMode;
  clock: Clock;
  rng: Rng;
  log: Logger;
}

export class Replica {
  private constructor(
    readonly primary: EmbeddedPostgres,
    readonly standby: EmbeddedPostgres,
    /** The replication link: the standby's walreceiver reaches the primary through it. */
    readonly link: LinkProxy,
    /** The address every client of the run uses (a virtual IP, a pgbouncer). */
    readonly vip: LinkProxy,
    readonly mode: ReplicationMode,
    private readonly clock: Clock,
  ) {}

  /**
   * Slot, copy, standby, synchronous mode if asked, and the VIP; resolves once
   * the primary reports the standby streaming in the asked mode. Tears down
   * what it started when any step fails.
   */
  static async start(primary: EmbeddedPostgres, o: ReplicaOptions): Promise<Replica> {
    const noStatements = () => undefined;
    const link = new LinkProxy({ name: 'replication', upstream: { host: '127.0.0.1', port: primary.listenPort }, clock: o.clock, rng: o.rng.fork('replication'), classify: noStatements });
    const vip = new LinkProxy({ name: 'vip', upstream: { host: '127.0.0.1', port: primary.listenPort }, clock: o.clock, rng: o.rng.fork('vip'), classify: noStatements });
    let standby: EmbeddedPostgres | undefined;
    try {
      const linkPort = await link.listen();
      await vip.listen();
      await once(primary.adminUrl, q.CreateStandbySlot, [STANDBY_NAME]);
      standby = new EmbeddedPostgres({
        log: o.log.child('standby'),
        initialise: async (dir) => {
          // A clean stop gives a consistent copy without pg_backup_start (the embedded set has no pg_basebackup).
          await primary.halt('fast');
          cpSync(primary.dataDirectory, dir, { recursive: true });
          for (const f of ['postmaster.pid', 'postmaster.opts']) rmSync(join(dir, f), { force: true });
          // The slot is the primary's: a copy on the standby would hold WAL there after its promotion.
          rmSync(join(dir, 'pg_replslot', STANDBY_NAME), { recursive: true, force: true });
          writeFileSync(join(dir, 'standby.signal'), '');
          appendFileSync(
            join(dir, 'postgresql.auto.conf'),
            `primary_conninfo = 'host=127.0.0.1 port=${linkPort} user=postgres application_name=${STANDBY_NAME}'\nprimary_slot_name = '${STANDBY_NAME}'\n`,
          );
          await primary.restart();
        },
      });
      await standby.start();
      if (o.mode === 'sync') {
        await once(primary.adminUrl, q.SetSynchronousStandby);
        await once(primary.adminUrl, q.ReloadConf);
      }
      const replica = new Replica(primary, standby, link, vip, o.mode, o.clock);
      await replica.streaming();
      o.log.info('streaming replica started', { mode: o.mode, standbyPort: standby.listenPort, vipPort: vip.port });
      return replica;
    } catch (err) {
      await Promise.allSettled([standby?.stop(), link.close(), vip.close()]);
      throw err;
    }
  }

  /** Waits until the primary reports the standby streaming, in sync mode when asked (30 s at most). */
  private async streaming(): Promise<ReplicationState> {
    const want = this.mode === 'sync' ? 'sync' : 'async';
    for (let i = 0; ; i++) {
      const s = await this.state();
      if (s.state === 'streaming' && s.syncState === want) return s;
      if (i >= 300) throw new Error(`the standby is not streaming in ${want} mode after 30 s (state ${s.state}, sync_state ${s.syncState})`);
      await this.clock.sleep(100);
    }
  }

  /** The primary's view of the standby now. */
  async state(): Promise<ReplicationState> {
    const [r] = await once(this.primary.adminUrl, q.ReplicationState, [STANDBY_NAME]);
    return {
      state: r.state,
      syncState: r.sync_state,
      primaryLsn: r.primary_lsn,
      replayLsn: r.replay_lsn,
      writeBehindBytes: r.write_behind_bytes,
      flushBehindBytes: r.flush_behind_bytes,
      replayBehindBytes: r.replay_behind_bytes,
      writeLagMs: r.write_lag_ms,
      replayLagMs: r.replay_lag_ms,
      synchronousStandbyNames: r.synchronous_standby_names,
      synchronousCommit: r.synchronous_commit,
      atMs: r.at_ms,
    };
  }

  /** The standby's position, and how far behind `primaryLsn` it replayed. */
  async standbyPosition(primaryLsn: string): Promise<StandbyPosition> {
    const [r] = await once(this.standby.adminUrl, q.StandbyPosition, [primaryLsn]);
    return {
      inRecovery: r.in_recovery,
      receiveLsn: r.receive_lsn,
      replayLsn: r.replay_lsn,
      lastReplayedCommitMs: r.last_replayed_commit_ms,
      behindBytes: r.behind_bytes,
      atMs: r.at_ms,
    };
  }

  /** pg_promote on the standby, waiting until it accepts writes. */
  async promote(): Promise<void> {
    const [r] = await once(this.standby.adminUrl, q.Promote);
    if (r.promoted !== true) throw new Error('pg_promote did not finish within 60 s');
  }

  /** New connections through the VIP go to the standby from now on; the ones still open are reset (the address moved). */
  repointVip(): number {
    this.vip.retarget({ host: '127.0.0.1', port: this.standby.listenPort });
    return this.vip.reset();
  }

  /** The independent count: acknowledged enqueues (ids and their ops) with no such row on the promoted primary, by SQL. */
  async missingAcknowledgedEnqueues(dbName: string, acked: { jobId: number; op: number }[]): Promise<number> {
    const u = new URL(this.standby.adminUrl);
    u.pathname = `/${dbName}`;
    const [r] = await once(u.toString(), q.MissingAcknowledgedEnqueues, [acked.map((a) => a.jobId), acked.map((a) => a.op)]);
    return r.missing;
  }

  /** Stops the standby and both proxies (the primary is the run's to stop). Safe to call twice. */
  async stop(): Promise<void> {
    await Promise.allSettled([this.vip.close(), this.link.close()]);
    await this.standby.stop();
  }
}
