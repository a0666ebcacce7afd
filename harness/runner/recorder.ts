import { createWriteStream, type WriteStream } from 'node:fs';
import type { Clock } from '../../engine/clock.ts';
import type { HistoryEvent } from '../history.ts';

/** A history event as a component reports it: the recorder stamps `t`. */
export type Recordable = HistoryEvent extends infer E ? (E extends HistoryEvent ? Omit<E, 't'> : never) : never;

/** How late a node's report may arrive and still be placed at the node's own time. */
const NODE_LAG_MS = 5_000;

/**
 * Appends every event of a run to the history, stamped with `t` (ms since the
 * run started, harness clock), in memory for the checkers and line by line
 * to history.jsonl, so an interrupted run still leaves what it saw.
 */
export class HistoryRecorder {
  readonly events: HistoryEvent[] = [];
  private readonly out?: WriteStream;
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

  /**
   * Records an event a node reported, at the moment it happened by the node's
   * clock (epoch ms) rather than when the report arrived. Reports from a busy
   * process can arrive a second or more late and in bursts; stamped on arrival,
   * a worker's failure could land after another worker's claim of the retry
   * and read as two holders at once. Node clocks are this host's clock, so
   * within NODE_LAG_MS of arrival the node's time is taken; a node whose clock
   * was stepped (a clock fault) falls back to arrival time.
   */
  /**
   * Records an event at an earlier moment of this run (`t`, from now()): a
   * fault whose effect others can see before the call that made it returns.
   */
  recordAt(event: Recordable, t: number): HistoryEvent {
    return this.insert({ t: Math.min(t, this.now()), ...event } as HistoryEvent);
  }

  recordAtNodeTime(event: Recordable, nodeTimeMs: number): HistoryEvent {
    const arrived = this.now();
    const happened = nodeTimeMs - this.startedAt;
    const t = happened <= arrived && happened >= arrived - NODE_LAG_MS ? happened : arrived;
    return this.insert({ t, ...event } as HistoryEvent);
  }

  /** Keeps `events` in time order (a late report goes where it happened); the file keeps arrival order and is sorted when read back. */
  private insert(e: HistoryEvent): HistoryEvent {
    let i = this.events.length;
    while (i > 0 && this.events[i - 1].t > e.t) i--;
    this.events.splice(i, 0, e);
    this.out?.write(JSON.stringify(e) + '\n');
    for (const l of this.listeners) l(e);
    return e;
  }

  /** Called with every event as it is recorded (the fault injectors watch for evidence). */
  onEvent(listener: (e: HistoryEvent) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (!this.out) return;
    await new Promise<void>((resolve) => this.out!.end(resolve));
  }
}
