/**
 * Every default in one place. Units are in the names.
 */
export const DEFAULTS = {
  /** Attempts before a job is dead-lettered (the source document's "commonly 5–8"). */
  maxAttempts: 6,
  /** Largest serialized payload accepted at enqueue, in bytes. */
  maxPayloadBytes: 256 * 1024,
  /** Priority when none is given; the range is 0 (lowest) to 9 (highest). */
  priority: 0,
  /** Visibility timeout: how long a claim lasts without a heartbeat. */
  leaseMs: 30_000,
  /** Heartbeat period; renewals push the lease to now() + leaseMs. Unset with a lease under 30 s: a third of the lease. */
  heartbeatMs: 10_000,
  /** First retry ceiling; attempt n waits random(0, min(cap, base * 2^(n-1))). */
  backoffBaseMs: 1_000,
  /** Largest retry ceiling. */
  backoffCapMs: 5 * 60_000,
  /** Jobs running at once in one worker process. */
  concurrency: 10,
  /** Poll interval when no NOTIFY arrives; the fallback that bounds wake-up latency. */
  pollMs: 1_000,
  /** How often the lease rescuer looks for expired claims. */
  rescueIntervalMs: 1_000,
  /** Expired leases with no recorded failure before a job is declared a poison pill. */
  maxCrashes: 2,
  /** How often a worker renews its liveness row; silent for 3 periods it is presumed dead. */
  livenessMs: 1_000,
  /** After a Postgres restart, how long live workers get to reconnect before their silence convicts them of a crash. */
  restartGraceMs: 10_000,
  /** Aging: priority p overtakes q > p after waiting (q - p) * agingMs longer. */
  agingMs: 5_000,
  /** A busy worker drains to run a suspect alone once the oldest suspect has waited this long (an idle one takes it at once). */
  suspectPatienceMs: 2_000,
  /** After SIGTERM, how long in-flight jobs may run before their claims are handed back. */
  shutdownGraceMs: 10_000,
} as const;
