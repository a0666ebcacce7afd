import { eventsEmittedBy, type Emitter, type Events, type NodeEvents } from '../events.ts';
import { eventMessage, type EventMessage } from './event-message.ts';

/** Many EventMessages in one IPC message, in the order they happened. */
export interface EventBatch<M = NodeEvents> {
  kind: 'events';
  events: EventMessage<M>[];
}

/** Any map's EventMessage, as the shipper carries it (it reads none of its fields). */
type AnyEventMessage = { kind: 'event' };

/** A batch this long is sent at once rather than at the end of the loop turn (bounds one message's size). */
const MAX_BATCH = 512;

/**
 * A node process's reports to the process that started it (its IPC channel),
 * batched: every event of one event-loop turn goes in one message, sent when
 * the turn's callbacks are done (setImmediate). One message per event cost a
 * JSON serialisation, a write to the channel and a parse, message event and
 * dispatch in the parent for each; a worker draining a burst emits hundreds of
 * events a turn, and at 500 jobs/s that was a fifth of the harness's CPU.
 *
 * What a SIGKILL loses: the events of the turn it lands in, which were not yet
 * written (before, a report written at once could be lost the same way between
 * the database's answer and its emit). A process that kills or stops itself on
 * purpose flushes first (`flush()`), and a graceful exit flushes before it ends.
 */
export class EventShipper {
  private queued: AnyEventMessage[] = [];
  private scheduled = false;

  /** `send`: writes one message to the IPC channel, then calls back; absent when there is no parent to report to. */
  constructor(private readonly send: ((message: object, written: () => void) => void) | undefined) {}

  ship(message: AnyEventMessage): void {
    if (!this.send) return;
    this.queued.push(message);
    if (this.queued.length >= MAX_BATCH) void this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      // Not a timer: the end of this turn, so a report is as prompt as before, just not alone.
      setImmediate(() => {
        this.scheduled = false;
        // A flush since (a self-kill's) may have sent them already.
        if (this.queued.length > 0) void this.flush();
      });
    }
  }

  /**
   * Sends what is queued now; resolves once it (and everything sent before it,
   * messages go out in order) is written to the channel. With nothing queued it
   * still sends a `flush` marker the parent ignores, to learn that.
   */
  flush(): Promise<void> {
    const send = this.send;
    if (!send) return Promise.resolve();
    const message = this.queued.length > 0 ? { kind: 'events', events: this.queued } : { kind: 'flush' };
    this.queued = [];
    return new Promise((resolve) => send(message, resolve));
  }
}

/** This process's shipper to its parent (a no-op without an IPC channel). */
export const toParent = new EventShipper(
  // With a callback a failed send (EPIPE: the parent is gone) is reported there, not as an unhandled 'error'.
  process.send ? (message, written) => (process.connected ? process.send!(message, () => written()) : written()) : undefined,
);

/**
 * The one way a node process (a worker, a scheduler, a relay) forwards its
 * components' events to the process that started it: every event `by` those
 * components emit on `events`, stamped with the node's own clock, batched by
 * `toParent`. Nothing without a parent.
 */
export function forwardToParent(events: Events, by: readonly Emitter[], nodeTime: () => number): void {
  if (!process.send) return;
  for (const name of eventsEmittedBy(...by)) events.on(name, (payload) => toParent.ship(eventMessage(name, payload, nodeTime())));
}
