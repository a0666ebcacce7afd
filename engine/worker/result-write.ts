import { backoffCeilingMs, type BackoffPolicy } from './backoff.ts';
import type { Clock } from '../clock.ts';
import { isRetryableDbError } from '../errors.ts';
import type { Logger } from '../log.ts';

/** How long a job's result write is retried through a dropped connection or a Postgres restart, ms. */
export const RESULT_WRITE_RETRY_MS = 30_000;

const RESULT_WRITE_BACKOFF: BackoffPolicy = { baseMs: 50, capMs: 2_000 };

/**
 * Writes a job's result (its completion, its failure, its hand-back),
 * retrying through errors that mean "the database went away" for up to
 * `retryForMs`. The write is fenced on the lease token, so a retry after the
 * lease was taken back is refused, never applied twice. Giving up sooner
 * would leave a live worker's job to its lease expiry, rerun for nothing.
 */
export async function writeResult<T>(
  write: () => Promise<T>,
  o: { clock: Clock; log: Logger; what: string; retryForMs?: number; onError?: (err: unknown) => void },
): Promise<T> {
  const started = o.clock.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      o.onError?.(err);
      if (!isRetryableDbError(err) || o.clock.now() - started > (o.retryForMs ?? RESULT_WRITE_RETRY_MS)) throw err;
      o.log.warn(`${o.what} failed; retrying`, { attempt, error: (err as Error).message });
      await o.clock.sleep(backoffCeilingMs(attempt + 1, RESULT_WRITE_BACKOFF));
    }
  }
}
