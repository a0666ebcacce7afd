import { enqueueQueries } from '../../engine/enqueue.ts';
import { workerQueries } from '../../engine/worker/queries.ts';
import type { CommitPoint, KnownStatement } from './proxy.ts';

/**
 * The engine's statements that make a transaction belong to a commit point,
 * by their exact text as the engine sends it (a prepared statement's Parse
 * carries it; its name is a hash of it, engine/db.ts `prepared`). A
 * reset-after-commit at `complete` cuts the answer to the batch completion's
 * commit, at `effect` the COMMIT of an effect's transaction (the one that ran
 * RecordEffectKey), at `claim` a claim that took jobs, at `enqueue` a single
 * enqueue that inserted its row. Read at each lookup, not copied at import:
 * a statement text that changed (a mutant patches one in its own process) is
 * simply not recognised, and a cut that never lands leaves no evidence, so
 * the run says inconclusive rather than pass.
 */
const POINTS: readonly (readonly [CommitPoint, string, () => string])[] = [
  ['claim', 'ClaimJobs', () => workerQueries.ClaimJobs],
  ['claim', 'ClaimSuspect', () => workerQueries.ClaimSuspect],
  ['complete', 'CompleteJobs', () => workerQueries.CompleteJobs],
  ['effect', 'RecordEffectKey', () => workerQueries.RecordEffectKey],
  ['enqueue', 'EnqueueOne', () => enqueueQueries.EnqueueOne],
];

/** Which known statement `text` is, if any. */
export function classifyStatement(text: string): KnownStatement | undefined {
  for (const [point, name, sql] of POINTS) if (sql() === text) return { point, name };
  return undefined;
}
