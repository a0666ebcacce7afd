// The deliver module of the relays a scenario runs (`stampede relay --deliver`
// loads it, as it loads a user's): sends each outbox row to the harness's
// sink (harness/runner/outbox-sink.ts) with the row's key, as a real deliver
// sends it as an Idempotency-Key. Anything but 200 throws, so the relay retries.
import type { Deliver } from '../engine/effects/relay.ts';

export const deliver: Deliver = async (row, ctx) => {
  const base = process.env.STAMPEDE_HARNESS_SINK_URL;
  if (!base) throw new Error('the harness deliver module needs STAMPEDE_HARNESS_SINK_URL');
  const writer = String((row.payload as { writer?: unknown } | null)?.writer ?? '');
  const q = new URLSearchParams({ key: ctx.idempotencyKey, attempt: String(ctx.attempt), relay: ctx.relayId, writer });
  const res = await fetch(`${base}/deliver?${q}`, { method: 'POST', signal: ctx.signal });
  await res.text();
  if (res.status !== 200) throw new Error(`sink answered ${res.status}`);
};
