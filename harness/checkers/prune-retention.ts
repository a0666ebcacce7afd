import type { FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export interface PruneRetentionBounds {
  /** The pruner's --retention-ms. */
  retentionMs: number;
  /**
   * The key's own timestamp is its transaction's start, a little before the effect row's
   * clock_timestamp() this checker ages it by; a key this much short of the retention is not early.
   */
  slackMs: number;
}

/**
 * The pruner's promise (engine/effects/pruner.sql): a dedup key is deleted
 * only once it is older than the retention, by the database's clock; inside
 * the retention it is there, so a replay of its job is a no-op (whether a
 * replay applied twice is exactly-one-effect's to judge). On the final
 * state: every committed effect whose key is gone from stampede.effect_keys
 * must be at least retentionMs old at the end (its age then is at least its
 * age when it was pruned). Inconclusive when no key was pruned, or none was
 * young enough at the end that an early prune could have shown.
 */
/** Only a key inside the retention could have been pruned early: kept, or gone too soon. */
const YOUNG = 'dedup keys inside the retention';

export function checkPruneRetention(_history: readonly HistoryEvent[], final: FinalState, bounds: PruneRetentionBounds): InvariantResult {
  const bound = `no key pruned younger than ${fmt(bounds.retentionMs)} ms`;
  if (!final.effectKeys || final.dbNowMs === undefined || !final.effectRows) {
    return { name: 'prune-retention', pass: 'unknown', figure: 'the final state has no dedup keys read (a run recorded before they were)', bound, judged: { n: 0, what: YOUNG } };
  }
  const present = new Set(final.effectKeys);
  const appliedAt = new Map<string, number>();
  for (const r of final.effectRows) if (r.appliedAtMs !== undefined) appliedAt.set(r.key, Math.min(appliedAt.get(r.key) ?? Infinity, r.appliedAtMs));
  let pruned = 0;
  let youngKept = 0;
  const early: { key: string; ageMs: number }[] = [];
  for (const [key, at] of appliedAt) {
    const ageMs = final.dbNowMs - at;
    if (present.has(key)) {
      if (ageMs < bounds.retentionMs) youngKept++;
      continue;
    }
    pruned++;
    if (ageMs < bounds.retentionMs - bounds.slackMs) early.push({ key, ageMs });
  }
  const figure = `${fmt(early.length)} pruned early of ${fmt(pruned)} pruned; ${fmt(youngKept)} keys inside the retention kept, of ${fmt(appliedAt.size)} effects`;
  let pass: boolean | 'unknown' = early.length === 0;
  if (pass && (pruned === 0 || youngKept === 0)) pass = 'unknown'; // the pruner never pruned, or nothing young was there to protect
  return { name: 'prune-retention', pass, figure, bound, judged: { n: youngKept + early.length, what: YOUNG }, ...(early.length ? { examples: firstN(early) } : {}) };
}

export const pruneRetention: CheckerDef<PruneRetentionBounds> = {
  name: 'prune-retention',
  says: 'the pruner deletes a dedup key only after its retention, so a replay inside it is recognised',
  check: checkPruneRetention,
  bounds: { retentionMs: 'number', slackMs: 'number' },
  defaults: { retentionMs: 7 * 24 * 3600_000, slackMs: 1_000 },
};
