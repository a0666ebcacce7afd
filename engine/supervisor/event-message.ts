import { systemClock } from '../clock.ts';

/**
 * An event as a node process reports it to the process that started it (over
 * the IPC channel NodeProcess opens). `nodeTime` is the node's own clock, which
 * a skew or a clock step may have moved; `hostTime` is this host's clock, which
 * nothing moves. Every node runs on its parent's host, so the parent orders
 * reports from many nodes by `hostTime`, however late a busy channel delivers
 * them.
 */
export interface EventMessage {
  kind: 'event';
  name: string;
  payload: unknown;
  nodeTime: number;
  hostTime: number;
}

export function eventMessage(name: string, payload: unknown, nodeTime: number): EventMessage {
  return { kind: 'event', name, payload, nodeTime, hostTime: systemClock.now() };
}
