import { queryPatch, type Mutant } from './types.ts';

/**
 * The shared round's freshness compared in the wrong unit, a one-word slip:
 * the page's sharedRoundMaxAgeMs is read as microseconds, so 10 s becomes
 * 10 ms and no round of the elected sampler is ever fresh enough. The queues
 * page then runs a round of its own on every load, however fresh the
 * sampler's is: each open dashboard costs a round again.
 */
export const sharedRoundAgeInMicroseconds: Mutant = {
  breaks: "the dashboard reads its shared-round age limit in microseconds, so its queues page never shows the elected sampler's fresh round and runs its own on every load",
  caughtBy: 'dashboard-shows-fresh-round',
  scenario: 'operator-chaos',
  // The dashboard is served by the scenario runner.
  runsIn: 'runner',
  changes: [queryPatch('engine/metrics/sampler-election.sql', 'ReadRound', [{ find: "interval '1 millisecond'", replace: "interval '1 microsecond'" }])],
};
