import { systemClock } from '../clock.ts';
import type { NodeEvents } from '../events.ts';

/**
 * An event as a node process reports it to the process that started it (over
 * the IPC channel NodeProcess opens). `nodeTime` is the node's own clock, which
 * a skew or a clock step may have moved; `hostTime` is this host's clock, which
 * nothing moves. Every node runs on its parent's host, so the parent orders
 * reports from many nodes by `hostTime`, however late a busy channel delivers
 * them.
 *
 * Typed by the map of what may be sent (NodeEvents by default; the harness's
 * own handler module adds its reports): one member per name, so switching on
 * `name` narrows `payload` on the receiving side.
 */
export type EventMessage<M = NodeEvents> = {
  [N in keyof M]: { kind: 'event'; name: N; payload: M[N]; nodeTime: number; hostTime: number };
}[keyof M];

export function eventMessage<M = NodeEvents, N extends keyof M = keyof M>(name: N, payload: M[N], nodeTime: number): EventMessage<M> {
  return { kind: 'event', name, payload, nodeTime, hostTime: systemClock.now() } as EventMessage<M>;
}
