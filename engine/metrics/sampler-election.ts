import type pg from 'pg';
import type { Db, Queryable } from '../db.ts';
import { loadQueries } from '../sql.ts';
import type { QueueStateSnapshot } from './queue-state-sampler.ts';

/** The loaded queries of sampler-election.sql; read at each call, so the harness's mutants can patch one (harness/mutants). Not part of engine/index.ts. */
export const samplerElectionQueries = loadQueries(new URL('./sampler-election.sql', import.meta.url), ['TryLeadSampling', 'WriteRound', 'ReadRound'] as const);
const q = samplerElectionQueries;

/** The round the elected sampler last wrote (stampede.queue_state_rounds). */
export interface SharedRound {
  /** As the leader built it, marked source 'shared'. */
  snapshot: QueueStateSnapshot;
  /** Rounds written since the table was created. */
  roundNo: number;
  /** The samplerId of the sampler that ran it. */
  leader: string;
  /** How long ago it was written, database clock, ms. */
  ageMs: number;
}

/** The shared round if one was written less than `maxAgeMs` ago (database clock), else null. */
export async function readSharedRound(db: Queryable, maxAgeMs: number): Promise<SharedRound | null> {
  const row = (await db.query(q.ReadRound, [maxAgeMs])).rows[0];
  return row ? { snapshot: { ...row.round, source: 'shared', leader: row.leader }, roundNo: Number(row.round_no), leader: row.leader, ageMs: row.age_ms } : null;
}

/**
 * One sampler per database: whoever holds the session-level advisory lock
 * (TryLeadSampling) runs the rounds, on the connection that holds it, and
 * writes each to stampede.queue_state_rounds; the others read that row. Each
 * sampler keeps one dedicated connection and, while it does not lead, tries
 * the lock once a round without waiting, so when the leader stops (its
 * session ends and the lock with it) the next to try takes over within one
 * interval.
 */
export class SamplerElection {
  private client: pg.Client | null = null;
  private leading = false;

  constructor(
    private readonly db: Db,
    /** Written beside each round this sampler leads. */
    readonly samplerId: string,
  ) {}

  /** True while this sampler holds the lock. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** The leader's connection when this sampler leads (taking the lock if it is free), else null. */
  async lead(): Promise<pg.Client | null> {
    if (!this.client) {
      this.client = await this.db.connectDedicated('queue-state-sampler');
      this.leading = false;
    }
    // Asked only while not leading: a session lock taken twice must be released twice.
    if (!this.leading) this.leading = (await this.client.query(q.TryLeadSampling)).rows[0].leading === true;
    return this.leading ? this.client : null;
  }

  /** Writes the leader's round for the others; returns its round number. */
  async share(snapshot: QueueStateSnapshot): Promise<number> {
    if (!this.client || !this.leading) throw new Error('share(): this sampler does not lead');
    return Number((await this.client.query(q.WriteRound, [this.samplerId, JSON.stringify(snapshot)])).rows[0].round_no);
  }

  /**
   * Ends the dedicated connection, and with it the lock: after an error on it
   * (a broken connection, a round over its timeout), or at stop. Another
   * sampler may lead from its next round; this one tries again from its next.
   */
  async resign(): Promise<void> {
    const client = this.client;
    this.client = null;
    this.leading = false;
    await client?.end().catch(() => {});
  }
}
