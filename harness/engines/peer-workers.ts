import { startGraphileWorker } from './graphile-worker.ts';
import { startPgBossWorker } from './pg-boss.ts';

/** A job as a peer's worker hands it to the harness's handler. */
export interface PeerJob {
  payload: Record<string, unknown>;
  /** 1 for the first attempt. */
  attempt: number;
  queue: string;
  /** On the harness's scale (0 lowest, 9 highest). */
  priority: number;
  runAtMs: number;
}

export interface PeerWorkerOptions {
  url: string;
  queues: string[];
  concurrency: number;
  workerId: string;
  /** The harness's handler: resolves when the job succeeded, throws when it failed. */
  run: (job: PeerJob) => Promise<void>;
}

/** A peer's running worker, as its process stops it on SIGTERM. */
export interface PeerWorker {
  /**
   * A graceful stop, as the peer's docs describe it: claim nothing more and let the running jobs finish;
   * when `graceMs` runs out with jobs still running, call `graceOver` and take the peer's forceful path,
   * which hands them back. Rejects when the peer said that hand-back failed.
   */
  stop(graceMs: number, graceOver: () => void): Promise<void>;
}

/** Each peer's worker, started in its process as the peer's docs say. */
export const PEER_WORKERS = {
  'graphile-worker': startGraphileWorker,
  'pg-boss': startPgBossWorker,
} satisfies Record<string, (o: PeerWorkerOptions) => Promise<PeerWorker>>;
