import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATIONS_DIR } from '../../engine/migrator.ts';
import type { Mutant } from './types.ts';

const MIGRATION = join(MIGRATIONS_DIR, '0016_fair_keys.sql');

/**
 * stampede.fair_pick as migration 0016 shipped it, taken from that file (a
 * forward-only migration: it does not change under the mutant): each claim
 * ranks a key's i-th job at i / weight and starts the shares over, so claims
 * smaller than a turn of the keys go to the heaviest key's low shares, claim
 * after claim, and a lighter key waits for its whole backlog (the key-weights
 * finding; fixed by 0019_fair_turns.sql).
 */
function preFixBody(): string {
  const text = readFileSync(MIGRATION, 'utf8');
  const from = text.indexOf('CREATE FUNCTION stampede.fair_pick(');
  const to = text.indexOf('END $$;', from);
  if (from < 0 || to < 0) throw new Error(`mutant fair-pick-per-claim: ${MIGRATION} has no CREATE FUNCTION stampede.fair_pick(...) ... END $$;`);
  return text.slice(from, to + 'END $$;'.length).replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION');
}

export const fairPickPerClaim: Mutant = {
  breaks: "a fair queue's claim starts the weighted shares over each claim, so claims smaller than a turn give the heavy key every job and the light key waits for its whole backlog",
  caughtBy: 'weighted-share',
  scenario: 'weighted-tenants',
  changes: [{ kind: 'database', replaces: 'stampede.fair_pick(text, integer, integer, text, boolean)', sql: preFixBody }],
};
