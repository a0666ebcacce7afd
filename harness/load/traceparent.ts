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

/** A traceparent's trace and span ids; null for anything else. */
export function parseTraceparent(value: string): { traceId: string; spanId: string } | null {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/.exec(value);
  return m ? { traceId: m[1], spanId: m[2] } : null;
}
