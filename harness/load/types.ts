import type { JobKind } from '../history.ts';

/** A lane: a queue, the priority its jobs carry, and its share of the offered load. */
export interface Lane {
  queue: string;
  /** 0 (lowest) to 9 (highest). */
  priority: number;
  /** Relative weight; shares are normalised over all lanes. */
  share: number;
}

/** How long a handler works, in ms. Sampled per job from the plan's seeded Rng. */
export type DurationDist =
  | { dist: 'fixed'; ms: number }
  | { dist: 'uniform'; minMs: number; maxMs: number }
  | { dist: 'exponential'; meanMs: number; maxMs?: number }
  /** Heavy-tailed, as real handlers are: set by its median and p99. */
  | { dist: 'lognormal'; medianMs: number; p99Ms: number };

/** One kind of job in the mix, with the handler parameters its payload carries. */
export interface MixEntry {
  kind: JobKind;
  /** Relative weight among the share-based entries. Give share or count, not both. */
  share?: number;
  /** Exactly this many jobs of this kind over the run, at seeded random times (they take the place of share-based arrivals). */
  count?: number;
  /** Handler duration. Default { dist: 'fixed', ms: 10 }. A `slow` job's is its stall (set it past the lease to test stealing). */
  durationMs?: DurationDist;
  /** `flaky` only: the handler throws on attempts 1..failAttempts and succeeds after. Default 2. */
  failAttempts?: number;
  /** Enqueued this many ms ahead of being due (a delayed job: `run_at = now() + delayMs`). Default 0. */
  delayMs?: number;
  /** Only these lanes (queue names) get this kind. Default: every lane, by lane share. */
  lanes?: string[];
  /**
   * The payload padded to exactly this many bytes serialized (UTF-8), mostly with a two-byte character, so its
   * length in UTF-16 units is about half its bytes: offered at and past maxPayloadBytes, to show the limit
   * (payload-size-refused). Default: unpadded.
   */
  payloadBytes?: number;
}

/** The arrival model: fixed spacing, or a Poisson process (exponential gaps), both open-model. */
export type LoadModel = 'constant' | 'poisson';

export interface LoadSpec {
  model: LoadModel;
  /** Offered jobs per second, whether or not the system keeps up. */
  rate: number;
}

export interface PlanInput {
  load: LoadSpec;
  durationS: number;
  lanes: Lane[];
  mix: MixEntry[];
  /** Tenants of some queues: each of their arrivals gets a fairnessKey drawn by these shares. Default: none (no keys). */
  tenants?: Tenants | null;
}

/** The tenants (fairnessKeys) of some queues and their shares of those queues' arrivals. */
export interface Tenants {
  queues: string[];
  keys: Record<string, number>;
}

/** What the handler module reads from a generated job's payload besides its kind. */
export interface JobParams {
  durationMs: number;
  failAttempts?: number;
  delayMs?: number;
}

/** One intended offer: when (ms since the load started), what, and where. */
export interface Arrival {
  /** Sequence number from 0; the job's idempotency key is `op:<op>` (see op-key.ts). */
  op: number;
  atMs: number;
  queue: string;
  priority: number;
  kind: JobKind;
  params: JobParams;
  /** The job's tenant (scenario `tenants`); absent: no key. */
  fairnessKey?: string;
  /** Its payload padded to this many bytes serialized (the mix entry's `payloadBytes`); absent: unpadded. */
  payloadBytes?: number;
}
