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
  readonly events: HistoryEvent[] = [];
  private readonly out?: WriteStream;
  private readonly listeners: ((e: HistoryEvent) => void)[] = [];

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
    const e = { t: this.now(), ...event } as HistoryEvent;
    this.events.push(e);
    this.out?.write(JSON.stringify(e) + '\n');
    for (const l of this.listeners) l(e);
    return e;
  }

  /** Called with every event as it is recorded (the fault injectors watch for evidence). */
  onEvent(listener: (e: HistoryEvent) => void): () => void {
    this.listeners.push(listener);
    return () => this.listeners.splice(this.listeners.indexOf(listener), 1);
  }

  async close(): Promise<void> {
    if (!this.out) return;
    await new Promise<void>((resolve) => this.out!.end(resolve));
  }
}
