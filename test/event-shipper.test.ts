// A worker's reports to the harness: batched per loop turn, in order, and flushed on demand (before a self-kill).
import { describe, expect, it } from 'vitest';
import { eventMessage } from '../engine/supervisor/event-message.ts';
import { EventShipper, type EventBatch } from '../engine/supervisor/event-shipper.ts';

/** A shipper whose channel records what was sent and calls back at once. */
function shipper(): { ship: EventShipper; sent: (EventBatch | { kind: 'flush' })[] } {
  const sent: (EventBatch | { kind: 'flush' })[] = [];
  return { sent, ship: new EventShipper((m, written) => (sent.push(m as EventBatch), written())) };
}

const names = (b: EventBatch | { kind: 'flush' }) => ('events' in b ? b.events.map((e) => e.name) : b.kind);
/** A report of any name: the shipper carries what it is given. */
const msg = (name: string, payload: unknown = {}) => eventMessage<Record<string, unknown>>(name, payload, 0);
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('EventShipper', () => {
  it('sends the events of one turn as one message, in the order they were shipped', async () => {
    const { ship, sent } = shipper();
    for (const name of ['job:claimed', 'job:started', 'job:completed']) ship.ship(msg(name, { jobId: 1 }));
    expect(sent).toEqual([]);
    await turn();
    ship.ship(msg('job:claimed', { jobId: 2 }));
    await turn();
    expect(sent.map(names)).toEqual([['job:claimed', 'job:started', 'job:completed'], ['job:claimed']]);
  });

  it('flush sends what is queued at once (a process about to kill itself), and a marker when nothing is', async () => {
    const { ship, sent } = shipper();
    ship.ship(msg('fault:bit', { jobId: 3 }));
    await ship.flush();
    expect(sent.map(names)).toEqual([['fault:bit']]);
    await ship.flush();
    expect(sent.map(names)).toEqual([['fault:bit'], 'flush']);
    await turn(); // the turn's scheduled send finds nothing left: nothing more is sent
    expect(sent).toHaveLength(2);
  });

  it('without a channel ships nothing and flushes at once', async () => {
    const ship = new EventShipper(undefined);
    ship.ship(msg('job:claimed', {}));
    await expect(ship.flush()).resolves.toBeUndefined();
  });
});
