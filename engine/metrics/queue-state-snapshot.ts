// The queue-state sampler's output: one round's figures as a plain object (what /metrics, the dashboard, the
// harness and the shared round in stampede.queue_state_rounds carry), and the pure fold from the round's rows.

export interface QueueFigures {
  pending: number;
  failed: number;
  /** Claimable jobs whose run_at has passed. */
  due: number;
  claimed: number;
  /** Claimed jobs whose lease expired and that no rescuer has handed back yet. */
  leasesOverdue: number;
  /** Rows in stampede.dead_letters for this queue; an estimate when deadLettersEstimated, but never 0 when there is one. */
  deadLetters: number;
  /** True when deadLetters is an estimate (the queue is past its share of the round's budget). */
  deadLettersEstimated: boolean;
  /** now() - run_at of the oldest due, unclaimed job, database clock; 0 when none is due. */
  oldestUnclaimedAgeMs: number;
  /** True when pending, failed and due are estimates (the queue is past its share of the round's budget). */
  depthEstimated: boolean;
  /** Paused by an operator (engine/control): no worker claims from it. Its depth and oldest age are still reported. */
  paused: boolean;
  /** The global in-flight limit; null: none. `claimed` is the in-flight count it is compared with. */
  maxInFlight: number | null;
  /** The global start-rate limit, jobs/s; null: none. */
  maxStartsPerSecond: number | null;
  /** Due jobs waiting only because the queue is at a limit (in flight at the limit, or no start tokens left); 0 otherwise. */
  heldBackByLimit: number;
}

/** One sample, as a plain object: what the harness reads for its progress line and alert thresholds. */
export interface QueueStateSnapshot {
  /** Node-clock epoch ms when the sample completed. */
  sampledAt: number;
  /** How long the round of queries took, node clock, ms. */
  durationMs: number;
  /** 'own': this sampler ran the round; 'shared': the elected sampler did, and this one read it (stampede.queue_state_rounds). */
  source: 'own' | 'shared';
  /** The samplerId of the elected sampler that ran it; null for a sampler outside the election. */
  leader: string | null;
  queues: Record<string, QueueFigures>;
  /** Claimable (pending + failed) jobs by queue. */
  depthByQueue: Record<string, number>;
  oldestUnclaimedAgeMs: Record<string, number>;
  /** Rows in stampede.dead_letters, all queues. */
  deadLetterDepth: number;
  pending: number;
  failed: number;
  claimed: number;
  dead: number;
  done: number;
  doneIsEstimate: boolean;
  jobsDeadTuples: number;
  jobsLiveTuples: number;
  /** Age of the oldest transaction (or prepared transaction) holding the xmin horizon, ms; 0 when none. */
  xminHorizonAgeMs: number;
  /** Same, in transaction IDs, including replication slots. */
  xminHorizonAgeXids: number;
  /** The horizon's age per kind of holder (backend, prepared, replication_slot); ageMs is null where unknown. */
  xminHolders: { holder: string; ageMs: number | null; ageXids: number }[];
}

/** A queue's figures when it has no live rows: what a page shows for a queue known only from its settings. */
export const EMPTY_QUEUE: QueueFigures = {
  pending: 0,
  failed: 0,
  due: 0,
  claimed: 0,
  leasesOverdue: 0,
  deadLetters: 0,
  deadLettersEstimated: false,
  oldestUnclaimedAgeMs: 0,
  depthEstimated: false,
  paused: false,
  maxInFlight: null,
  maxStartsPerSecond: null,
  heldBackByLimit: 0,
};

/** Folds the query rows into the plain snapshot. Pure. */
export function buildSnapshot(rows: Record<string, any[]>, sampledAt: number, durationMs: number): Omit<QueueStateSnapshot, 'source' | 'leader'> {
  const queues: Record<string, QueueFigures> = {};
  const queue = (name: string) => (queues[name] ??= { ...EMPTY_QUEUE });
  for (const r of rows.ClaimableByQueue) {
    Object.assign(queue(r.queue), {
      // Estimated past the queue's share of the budget (queue-state.sql); failed is never above claimable.
      pending: Math.max(0, r.claimable - r.failed),
      failed: r.failed,
      due: r.due,
      depthEstimated: r.estimated,
      oldestUnclaimedAgeMs: Math.max(0, r.oldest_due_age_s * 1000),
    });
  }
  for (const r of rows.ClaimedByQueue) Object.assign(queue(r.queue), { claimed: r.claimed, leasesOverdue: r.overdue });
  for (const r of rows.DeadLettersByQueue) Object.assign(queue(r.queue), { deadLetters: r.dead, deadLettersEstimated: r.estimated });
  for (const r of rows.QueueControls) {
    const f = queue(r.queue);
    const atLimit = (r.max_in_flight !== null && f.claimed >= r.max_in_flight) || (r.start_tokens !== null && r.start_tokens < 1);
    Object.assign(f, {
      paused: r.paused,
      maxInFlight: r.max_in_flight,
      maxStartsPerSecond: r.max_starts_per_second,
      heldBackByLimit: !r.paused && atLimit ? f.due : 0,
    });
  }

  const all = Object.values(queues);
  const sum = (k: keyof QueueFigures) => all.reduce((n, f) => n + Number(f[k]), 0);
  const pending = sum('pending');
  const failed = sum('failed');
  const claimed = sum('claimed');
  const dead = sum('deadLetters');
  const health = rows.JobsTableHealth[0] ?? { live_tuples: 0, dead_tuples: 0 };
  const exactDone = rows.DoneExact?.[0]?.done as number | undefined;
  const holders = (rows.XminHorizon as { holder: string; age_s: number | null; age_xids: number | null }[]).map((h) => ({
    holder: h.holder,
    ageMs: h.age_s === null ? (h.holder === 'replication_slot' ? null : 0) : Math.max(0, h.age_s * 1000),
    ageXids: h.age_xids ?? 0,
  }));

  return {
    sampledAt,
    durationMs,
    queues,
    depthByQueue: Object.fromEntries(Object.entries(queues).map(([n, f]) => [n, f.pending + f.failed])),
    oldestUnclaimedAgeMs: Object.fromEntries(Object.entries(queues).map(([n, f]) => [n, f.oldestUnclaimedAgeMs])),
    deadLetterDepth: dead,
    pending,
    failed,
    claimed,
    dead,
    // n_live_tup lags by up to a second and is an estimate: clamp, never negative.
    done: exactDone ?? Math.max(0, health.live_tuples - pending - failed - claimed - dead),
    doneIsEstimate: exactDone === undefined,
    jobsDeadTuples: health.dead_tuples,
    jobsLiveTuples: health.live_tuples,
    xminHorizonAgeMs: Math.max(0, ...holders.map((h) => h.ageMs ?? 0)),
    xminHorizonAgeXids: Math.max(0, ...holders.map((h) => h.ageXids)),
    xminHolders: holders,
  };
}
