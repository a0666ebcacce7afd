import { createHash } from 'node:crypto';

/**
 * The W3C traceparent a traced scenario's producer enqueues offer `op` under,
 * as the request that enqueued it would carry: trace and span ids drawn from
 * the seed and the op (a replay traces the same ids), sampled.
 */
export function traceparentOf(seed: number): (op: number) => string {
  return (op) => {
    const hex = createHash('sha256').update(`traceparent/${seed}/${op}`).digest('hex');
    return `00-${hex.slice(0, 32)}-${hex.slice(32, 48)}-01`;
  };
}

/** The engine's reading of a traceparent (engine/tracing.ts), for the checker that follows a job's trace. */
export { parseTraceparent } from '../../engine/tracing.ts';
