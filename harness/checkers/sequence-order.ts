import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { eventsOf } from '../history.ts';
import { firstN, fmt, maxOf, type CheckerDef } from './types.ts';

export interface SequenceOrderBounds {
  /** The sequential queue (setQueueLimits `sequential`). */
  queue: string;
  /**
   * How long before a later job's first claim an earlier job must have been inserted (database clock) to be
   * judged as before it: an insert not yet committed when the claim ran was not there to wait for.
   */
  visibleMs: number;
}

type Claim = Extract<HistoryEvent, { type: 'job:claimed' }>;

/**
 * A sequential queue runs each key's jobs one at a time in enqueue order,
 * across kills. Two witnesses. Overlap: the downstream's own count of one
 * key's open calls (harness/runner/downstream.ts) never exceeds 1. Order: for
 * two jobs A before B of one key (A inserted, by its run_at on the database
 * clock, at least `visibleMs` before B was first claimed), every claim of A,
 * its reruns after a kill or a failure included, comes before B's first claim
 * (database clock). Jobs are in enqueue order by id.
 *
 * Which instants: a claim of A began (its statement's start, `dbTime`) before
 * A could run and finish, and B's claim could only take B (`takenAt`, after
 * the claim's queue lock and its fresh look at the key's head) once A was
 * finished, so A's claims' starts precede B's take in any correct run. B's
 * statement start is no witness: a claim that began before A's last claim can
 * wait for the queue's lock (or the CPU) until A is done, then rightly take B
 * with a start earlier than A's (one pair in a CI run did). Both on the
 * database's ms, so a tie is no evidence either way. Runs recorded before
 * claims reported `takenAt` fall back to the statement start.
 * Inconclusive when no key of the queue had two jobs to order.
 */
export function checkSequenceOrder(history: readonly HistoryEvent[], _final: FinalState, bounds: SequenceOrderBounds): InvariantResult {
  const runAt = new Map<number, number>();
  for (const e of eventsOf(history, 'enqueue:ok')) if (e.queue === bounds.queue) runAt.set(e.jobId, e.runAt);
  const claimsByJob = new Map<number, Claim[]>();
  const keyOf = new Map<number, string>();
  for (const c of eventsOf(history, 'job:claimed')) {
    if (c.queue !== bounds.queue || c.fairnessKey == null || c.dbTime === undefined) continue;
    keyOf.set(c.jobId, c.fairnessKey);
    claimsByJob.set(c.jobId, [...(claimsByJob.get(c.jobId) ?? []), c]);
  }
  const byKey = new Map<string, number[]>();
  for (const [id, key] of keyOf) byKey.set(key, [...(byKey.get(key) ?? []), id]);
  const reordered: { key: string; earlier: number; later: number; earlierClaimedAt: number; laterFirstClaimedAt: number }[] = [];
  let pairs = 0;
  for (const [key, ids] of byKey) {
    ids.sort((a, b) => a - b);
    for (let j = 1; j < ids.length; j++) {
      const later = ids[j];
      const laterFirst = Math.min(...claimsByJob.get(later)!.map((c) => c.takenAt ?? c.dbTime!));
      // The nearest earlier job that was surely visible at that claim: the order is a chain, so judging each job
      // against it covers the rest.
      const earlier = ids.slice(0, j).reverse().find((id) => (runAt.get(id) ?? Infinity) + bounds.visibleMs <= laterFirst);
      if (earlier === undefined) continue;
      pairs++;
      const lastOfEarlier = maxOf(claimsByJob.get(earlier)!.map((c) => c.dbTime!));
      if (lastOfEarlier > laterFirst) reordered.push({ key, earlier, later, earlierClaimedAt: lastOfEarlier, laterFirstClaimedAt: laterFirst });
    }
  }
  const keys = new Set(keyOf.values());
  const calls = eventsOf(history, 'downstream:call').filter((c) => c.keyInFlight !== undefined && keyOf.has(c.jobId));
  const overlaps = calls.filter((c) => c.keyInFlight! > 1);
  return {
    name: 'sequence-order',
    pass: reordered.length > 0 || overlaps.length > 0 ? false : pairs === 0 ? 'unknown' : true,
    figure: `${fmt(pairs)} consecutive pairs of ${fmt(keys.size)} keys judged, ${fmt(reordered.length)} out of order; ${fmt(overlaps.length)} of ${fmt(calls.length)} calls overlapped another of their key`,
    bound: 'no key runs two jobs at once; every claim of a key\'s earlier job begins before its next job\'s first claim takes it',
    judged: { n: pairs, what: "pairs of one key's consecutive jobs" },
    ...(reordered.length || overlaps.length
      ? { examples: [...firstN(reordered), ...firstN(overlaps).map((c) => ({ jobId: c.jobId, key: c.key, keyInFlight: c.keyInFlight, t: c.t }))] }
      : {}),
  };
}

export const sequenceOrder: CheckerDef<SequenceOrderBounds> = {
  name: 'sequence-order',
  says: "a sequential queue runs each key's jobs one at a time in enqueue order, across kills",
  check: checkSequenceOrder,
  bounds: { queue: 'string', visibleMs: 'number' },
  defaults: { queue: 'accounts', visibleMs: 250 },
};
