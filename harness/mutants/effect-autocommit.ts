import { effectInTransaction } from '../../engine/worker/effect-once.ts';
import type { WorkerStrategies } from '../../engine/worker/strategies.ts';
import type { Mutant } from './types.ts';

/**
 * effectOnce runs the handler's statements on a plain pooled connection, each
 * committing on its own, and only then records the key and completes the job
 * in a transaction: the "transaction" a handler was promised is not one. A
 * worker killed inside the effect leaves its writes, the outbox intent among
 * them, committed; the retry applies the effect again, and the relay delivers
 * the dead attempt's intent.
 */
const autocommitEffect: WorkerStrategies['effectOnce'] = async (db, job, key, fn) => {
  const client = await db.pool.connect();
  let result: Awaited<ReturnType<typeof fn>>;
  try {
    result = await fn(client);
  } finally {
    client.release();
  }
  return effectInTransaction(db, job, key, async () => result);
};

export const effectAutocommit: Mutant = {
  breaks: "effectOnce runs the effect's statements outside its transaction (each autocommits), so an attempt killed mid-effect leaves its outbox intent committed and the relay delivers it",
  caughtBy: 'outbox-delivery',
  scenario: 'effects-pipeline',
  changes: [{ kind: 'strategy', strategy: 'effectOnce', use: autocommitEffect }],
};
