import { DEFAULTS } from '../../engine/defaults.ts';
import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { JobIndex } from './jobs.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface PayloadSizeBounds {
  /** The limit the run's enqueues were held to (Enqueue's maxPayloadBytes): bytes of serialized UTF-8. */
  maxPayloadBytes: number;
}

/**
 * maxPayloadBytes (docs/configuration.md): judged over the load generator's
 * padded offers (a mix entry's `payloadBytes`: exactly that many bytes of
 * JSON, mostly two-byte characters). Each one over the limit must be refused
 * with the documented error ("payload: is N bytes serialized; the limit is
 * L", a ValidationError) and leave no row (no job with its `op:<n>` key); each
 * one at or under it must be acknowledged and stored. An offer whose outcome
 * was lost (a reset connection) is not judged. Unknown when no padded offer
 * was judged.
 */
export function checkPayloadSizeRefused(history: readonly HistoryEvent[], final: FinalState, bounds: PayloadSizeBounds): InvariantResult {
  const max = bounds.maxPayloadBytes;
  const base = { name: 'payload-size-refused', bound: `over ${fmt(max)} bytes refused with the field and the size named and nothing stored; at or under it stored` };
  const idx = new JobIndex(history, final);
  const bad: Record<string, unknown>[] = [];
  let over = 0;
  let within = 0;
  for (const r of idx.ops.values()) {
    const bytes = r.invoke?.payloadBytes;
    if (bytes === undefined || r.info) continue;
    if (bytes > max) {
      over++;
      const expected = `payload: is ${bytes} bytes serialized; the limit is ${max}`;
      if (r.fail?.error !== expected) bad.push({ op: r.op, bytes, answered: r.ok ? `job ${r.ok.jobId}` : (r.fail?.error ?? 'nothing'), expected });
      if (r.job) bad.push({ op: r.op, bytes, stored: `job ${r.job.id} (${r.job.state})` });
    } else {
      within++;
      if (!r.ok || !r.job) bad.push({ op: r.op, bytes, answered: r.ok ? `job ${r.ok.jobId}` : (r.fail?.error ?? 'nothing'), stored: r.job ? `job ${r.job.id}` : 'no row' });
    }
  }
  const n = over + within;
  return {
    ...base,
    pass: bad.length > 0 ? false : n === 0 ? 'unknown' : true,
    figure: `${fmt(over)} padded payloads over the limit, ${fmt(within)} at or under it; ${fmt(bad.length)} wrong (stored over it, refused otherwise, or refused without the documented error)`,
    judged: { n, what: 'padded payloads offered' },
    ...(bad.length ? { examples: firstN(bad) } : {}),
  };
}

export const payloadSizeRefused: CheckerDef<PayloadSizeBounds> = {
  name: 'payload-size-refused',
  says: 'a payload over maxPayloadBytes (serialized UTF-8) is refused at enqueue with the field named and nothing is stored; one at or under it is stored',
  check: checkPayloadSizeRefused,
  bounds: { maxPayloadBytes: 'number' },
  defaults: { maxPayloadBytes: DEFAULTS.maxPayloadBytes },
};
