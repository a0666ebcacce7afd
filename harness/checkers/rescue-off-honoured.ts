import type { EventOf, FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export type RescueOffHonouredBounds = Record<string, never>;

/** One worker process's life on its node: from its start (or its settings, when no start was recorded) to its exit. */
interface Life {
  node: string;
  fromT: number;
  /** When it exited; +Infinity while it lived to the end of the history. */
  toT: number;
  settings?: EventOf<'worker:settings'>;
  /** The rescues its node reported while it was the node's process: its own rescuer's. */
  own: EventOf<'lease:rescued'>[];
}

/**
 * Worker.rescue: false is honoured: a worker process whose recorded settings
 * (`worker:settings`) say `rescue: false` takes back no expired lease. A
 * rescue (`lease:rescued`) is its process's: the one on the rescue's node,
 * which runs one process at a time; it belongs to the node's latest process
 * started before it (a report can come in after its process's exit, never
 * after the next one's start), and is judged once that process's settings
 * are known, so a rescue reported before the settings (they are shipped
 * after the worker's first events) is not missed. Judged over every rescue,
 * by any process, that happened while a rescue-off process lived: the
 * chances it had to take one. Unknown when no process ran with rescue off,
 * or none lived through a rescue.
 */
export function checkRescueOffHonoured(history: readonly HistoryEvent[], _final: FinalState): InvariantResult {
  const lives: Life[] = [];
  const current = new Map<string, Life>();
  const rescues: EventOf<'lease:rescued'>[] = [];
  const open = (node: string, fromT: number) => {
    const life: Life = { node, fromT, toT: Number.POSITIVE_INFINITY, own: [] };
    lives.push(life);
    current.set(node, life);
    return life;
  };
  for (const e of history) {
    if (e.type === 'process:started' && e.role === 'worker') open(e.node, e.t);
    else if (e.type === 'process:exited' && e.role === 'worker') {
      const life = current.get(e.node);
      if (life && life.toT === Number.POSITIVE_INFINITY) life.toT = e.t;
    } else if (e.type === 'worker:settings') {
      // A history without process starts (a hand-made one, a peer's): each report of settings is a new process.
      const life = current.get(e.node);
      (life && !life.settings ? life : open(e.node, e.t)).settings = e;
    } else if (e.type === 'lease:rescued') {
      rescues.push(e);
      current.get(e.node)?.own.push(e);
    }
  }

  const off = lives.filter((l) => l.settings?.rescue === false);
  const judged = rescues.filter((r) => off.some((l) => l.own.includes(r) || (r.t >= l.fromT && r.t <= l.toT)));
  const taken = off.flatMap((l) =>
    l.own.map((r) => ({ workerId: l.settings!.workerId, node: l.node, jobId: r.jobId, owner: r.owner ?? null, t: r.t })),
  );
  const what = 'rescues while a worker with rescue: false lived';
  const base = {
    name: 'rescue-off-honoured',
    bound: 'a worker started with rescue: false takes back no expired lease: 0',
    judged: { n: judged.length, what },
  };
  if (off.length === 0) {
    return { ...base, pass: 'unknown', figure: `no worker process reported rescue: false (of ${fmt(lives.length)} worker processes): nothing to judge` };
  }
  const figure = `${fmt(taken.length)} leases taken back by ${fmt(off.length)} worker processes with rescue: false, of ${fmt(judged.length)} rescues while they lived`;
  if (taken.length > 0) return { ...base, pass: false, figure, examples: firstN(taken) };
  return { ...base, pass: judged.length > 0 ? true : 'unknown', figure };
}

export const rescueOffHonoured: CheckerDef<RescueOffHonouredBounds> = {
  name: 'rescue-off-honoured',
  says: 'a worker started with rescue: false takes back no expired lease (another process must)',
  check: checkRescueOffHonoured,
  bounds: {},
  defaults: {},
};
