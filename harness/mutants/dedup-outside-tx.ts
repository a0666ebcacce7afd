import { loadQueries } from '../../engine/sql.ts';
import { workerQueries } from '../../engine/worker/queries.ts';
import type { WorkerStrategies } from '../../engine/worker/strategies.ts';
import type { Mutant } from './types.ts';

const q = loadQueries(new URL('./dedup-outside-tx.sql', import.meta.url), ['EffectKeyExists'] as const);

/**
 * effectOnce as the source document warns against: look the key up, run the
 * effect in its own commit, record the key in another. A worker killed
 * between the two commits, or two overlapping deliveries, apply it twice.
 * The job then completes the ordinary way, after the handler.
 */
const effectThenKey: WorkerStrategies['effectOnce'] = async (db, job, key, fn) => {
  const seen = await db.query(q.EffectKeyExists, [key]);
  if (seen.rowCount) return { applied: false, completedJob: false };
  const result = await db.transaction(fn);
  await db.query(workerQueries.RecordEffectKey, [key, job.id]);
  return { applied: true, result, completedJob: false };
};

export const dedupOutsideTx: Mutant = {
  breaks: 'effectOnce writes the dedup key in a separate commit after the effect',
  caughtBy: 'exactly-one-effect',
  scenario: 'slow-worker-no-heartbeat',
  changes: [{ kind: 'strategy', strategy: 'effectOnce', use: effectThenKey }],
};
