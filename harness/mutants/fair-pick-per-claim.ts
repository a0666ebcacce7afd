import { migrationFunction } from './migration-function.ts';
import type { Mutant } from './types.ts';

/**
 * stampede.fair_pick as migration 0016 shipped it, taken from that file (a
 * forward-only migration: it does not change under the mutant): each claim
 * ranks a key's i-th job at i / weight and starts the shares over, so claims
 * smaller than a turn of the keys go to the heaviest key's low shares, claim
 * after claim, and a lighter key waits for its whole backlog (the key-weights
 * finding; fixed by 0019_fair_turns.sql).
 */
const preFixBody = () => migrationFunction('fair-pick-per-claim', '0016_fair_keys.sql', 'stampede.fair_pick');

export const fairPickPerClaim: Mutant = {
  breaks: "a fair queue's claim starts the weighted shares over each claim, so claims smaller than a turn give the heavy key every job and the light key waits for its whole backlog",
  caughtBy: 'weighted-share',
  scenario: 'weighted-tenants',
  changes: [{ kind: 'database', replaces: 'stampede.fair_pick(text, integer, integer, text, boolean)', sql: preFixBody }],
};
