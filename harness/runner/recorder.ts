import { createWriteStream, type WriteStream } from 'node:fs';
import type { Clock } from '../../engine/clock.ts';
import type { HistoryEvent } from '../history.ts';

/** A history event as a component reports it: the recorder stamps `t`. */
export type Recordable = HistoryEvent extends infer E ? (E extends HistoryEvent ? Omit<E, 't'> : never) : never;

/**
 * Appends every event of a run to the history, stamped with `t` (ms since the
 * run started, harness clock), in memory for the checkers and line by line
 * to history.jsonl, so an interrupted run still leaves what it saw.
 */
export class HistoryRecorder {
  /** Every event so far, appended as it arrives; `inOrder` says whether that is also time order (`events` sorts it when not). */
  private readonly arrived: HistoryEvent[] = [];
  private inOrder = true;
  private readonly out?: WriteStream;
  /** Lines not yet handed to the file: one write per loop turn, not one per event (a worker's batch is hundreds). */
  private pending: string[] = [];
  // A set: removing a listener twice, or while events are delivered, must not touch another one.
  private readonly listeners = new Set<(e: HistoryEvent) => void>();

  constructor(
    private readonly clock: Clock,
    private readonly startedAt: number,
    file?: string,
  ) {
    if (file) this.out = createWriteStream(file, { flags: 'w' });
  }

  /** ms since the run started. */
  now(): number {
    return this.clock.now() - this.startedAt;
  }

  record(event: Recordable): HistoryEvent {
    return this.recordAt(event, this.now());
  }

  /** The events in time order (a late report where it happened; equal times in arrival order). */
  get events(): HistoryEvent[] {
    if (!this.inOrder) {
      this.arrived.sort((a, b) => a.t - b.t); // stable: equal times keep their arrival order
      this.inOrder = true;
    }
    return this.arrived;
  }

  /**
   * Records an event at an earlier moment of this run (`t`, from now()): a
   * fault whose effect others can see before the call that made it returns.
   */
  recordAt(event: Recordable, t: number): HistoryEvent {
    return this.insert({ t: Math.min(t, this.now()), ...event } as HistoryEvent);
  }

  /**
   * Records an event a node reported, at the moment it happened by the host's
   * clock (`hostTime` of its EventMessage, epoch ms), not when the report
   * arrived. A busy harness reads its IPC channels seconds late and in bursts;
   * stamped on arrival, a worker's failure could land after another worker's
   * claim of the retry and read as two holders at once.
   */
  recordReported(event: Recordable, hostTimeMs: number): HistoryEvent {
    return this.recordAt(event, hostTimeMs - this.startedAt);
  }

  /** Appends in arrival order, which the file keeps (it is sorted when read back); `events` sorts on demand. */
  private insert(e: HistoryEvent): HistoryEvent {
    const last = this.arrived[this.arrived.length - 1];
    if (last !== undefined && last.t > e.t) this.inOrder = false;
    this.arrived.push(e);
    if (this.out) {
      if (this.pending.length === 0) setImmediate(() => this.writePending());
      this.pending.push(JSON.stringify(e));
    }
    for (const l of this.listeners) l(e);
    return e;
  }

  /** Called with every event as it is recorded (the fault injectors watch for evidence). */
  onEvent(listener: (e: HistoryEvent) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  private writePending(): void {
    if (this.pending.length === 0) return;
    this.out!.write(this.pending.join('\n') + '\n');
    this.pending = [];
  }

  async close(): Promise<void> {
    if (!this.out) return;
    this.writePending();
    await new Promise<void>((resolve) => this.out!.end(resolve));
  }
}
