import { queryPatch, type Mutant } from './types.ts';

/**
 * The pruner reads its retention in the wrong unit (divided by 100,000, not
 * 1,000): dedup keys are deleted within a hundredth of the retention, so a
 * replay inside the promised window is no longer recognised. Runs in the
 * relay processes, whose pruner it is.
 */
export const pruneIgnoresRetention: Mutant = {
  breaks: 'the pruner deletes dedup keys after a hundredth of the retention, so a replay inside the retention would apply again',
  caughtBy: 'prune-retention',
  scenario: 'effects-pipeline',
  runsIn: 'relay',
  changes: [
    queryPatch('engine/effects/pruner.sql', 'PruneEffectKeys', [
      { find: 'applied_at < now() - make_interval(secs => $1::float8 / 1000)', replace: 'applied_at < now() - make_interval(secs => $1::float8 / 100000)' },
    ]),
  ],
};
