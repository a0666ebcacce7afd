import { QUEUE_STATE_SAMPLER_DEFAULTS } from '../../engine/metrics/queue-state-sampler.ts';
import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { eventsOf, slotIdOf } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface OneRoundPerIntervalBounds {
  /** The elected sampler's interval, ms: the workers' QueueStateSampler.intervalMs (its default under --sample-queue-state). */
  intervalMs: number;
  /** How long after the next leader's first round the harness may record the last leader's exit, ms (it reads exits over IPC, late under load). */
  exitSlackMs: number;
  /** Handovers (a round by another worker than the one before) the run must show: an election that never moved proves no failover. */
  minHandovers: number;
}

/**
 * Workers started with --sample-queue-state elect one sampler between them
 * (engine/metrics/sampler-election.ts): N workers cost one round per interval,
 * not N, and another takes over when the leader stops. Judged over the rounds
 * the elected sampler wrote (`sampler:round`, every write to
 * stampede.queue_state_rounds, in order): two consecutive rounds by different
 * workers less than one interval apart are two samplers leading at once,
 * unless the first one's process exited between them (a leader that died: the
 * next to try the lock runs its round at once, whatever the last one's phase).
 * A leader that resigns after a failed round but lives wrote its last round at
 * least an interval before its successor's first: it slept one interval before
 * the round that failed. Inconclusive with fewer than `minHandovers` handovers.
 */
export function checkOneRoundPerInterval(history: readonly HistoryEvent[], _final: FinalState, bounds: OneRoundPerIntervalBounds): InvariantResult {
  const rounds = eventsOf(history, 'sampler:round').sort((a, b) => a.roundNo - b.roundNo);
  const exits = eventsOf(history, 'process:exited').filter((e) => e.role === 'worker');
  const starts = eventsOf(history, 'process:started').filter((e) => e.role === 'worker');
  // A leader named by its slot's one worker id (reuseWorkerIds: `worker-0`, no generation) is the slot's process
  // that had last started by its round, named as the history names processes (`worker-0.<generation>`).
  const leaderOf = (r: (typeof rounds)[number]): string => {
    if (slotIdOf(r.leader) !== r.leader) return r.leader;
    const n = starts.filter((s) => s.node === r.node && s.t <= r.t).length;
    return n > 0 ? `${r.leader}.${n}` : r.leader;
  };
  const overlaps: { roundNo: number; leader: string; previous: string; gapMs: number; t: number }[] = [];
  let handovers = 0;
  let afterExit = 0;
  for (let i = 1; i < rounds.length; i++) {
    const [prev, cur] = [rounds[i - 1], rounds[i]];
    if (leaderOf(cur) === leaderOf(prev)) continue;
    handovers++;
    const gapMs = cur.t - prev.t;
    if (gapMs >= bounds.intervalMs) continue;
    const died = exits.some((e) => e.node === prev.node && e.t > prev.t && e.t <= cur.t + bounds.exitSlackMs);
    if (died) afterExit++;
    else overlaps.push({ roundNo: cur.roundNo, leader: leaderOf(cur), previous: leaderOf(prev), gapMs: Math.round(gapMs), t: Math.round(cur.t) });
  }
  const leaders = new Set(rounds.map(leaderOf)).size;
  const intervals = Math.max(0, rounds.length - 1);
  const spanS = rounds.length > 1 ? (rounds[rounds.length - 1].t - rounds[0].t) / 1000 : 0;
  return {
    name: 'one-round-per-interval',
    pass: overlaps.length > 0 ? false : rounds.length === 0 || handovers < bounds.minHandovers ? 'unknown' : true,
    figure: rounds.length
      ? `${fmt(rounds.length)} rounds over ${fmt(spanS, 1)} s by ${fmt(leaders)} successive leaders; ${fmt(handovers)} handovers (${fmt(afterExit)} within an interval, after the last leader's exit); ${fmt(overlaps.length)} rounds by a second sampler within one interval while the last one lived`
      : 'no round of an elected sampler (does the scenario set sampleQueueState?)',
    bound: `no two samplers' rounds within ${fmt(bounds.intervalMs)} ms unless the first one's process exited between them; at least ${fmt(bounds.minHandovers)} handover`,
    judged: { n: intervals, what: "intervals between the elected sampler's rounds" },
    ...(overlaps.length ? { examples: firstN(overlaps) } : {}),
  };
}

export const oneRoundPerInterval: CheckerDef<OneRoundPerIntervalBounds> = {
  name: 'one-round-per-interval',
  says: 'workers that sample queue state elect one sampler: no two of them run rounds within one interval, and the election moves when the leader dies',
  check: checkOneRoundPerInterval,
  bounds: { intervalMs: 'number', exitSlackMs: 'number', minHandovers: 'number' },
  defaults: { intervalMs: QUEUE_STATE_SAMPLER_DEFAULTS.intervalMs, exitSlackMs: 2_000, minHandovers: 1 },
};
