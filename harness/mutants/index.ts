import { applyMutant as applyChanges } from './apply.ts';
import { chargeOnFailure } from './charge-on-failure.ts';
import { crashOnAnyExpiry } from './crash-on-any-expiry.ts';
import { dedupOutsideTx } from './dedup-outside-tx.ts';
import { effectLockWait } from './effect-lock-wait.ts';
import { noAging } from './no-aging.ts';
import { noCrashDetection } from './no-crash-detection.ts';
import { noFencing } from './no-fencing.ts';
import { noJitter } from './no-jitter.ts';
import { noSkipLocked } from './no-skip-locked.ts';
import { claimIgnoresBackoff } from './claim-ignores-backoff.ts';
import { claimStealsExpiringLeases } from './claim-steals-expiring-leases.ts';
import { failOneOverBudget } from './fail-one-over-budget.ts';
import { renewalDoublesLease } from './renewal-doubles-lease.ts';
import { renewalUnfenced } from './renewal-unfenced.ts';
import { rescueFinishesLiveHolder } from './rescue-finishes-live-holder.ts';
import { suspectsInBatches } from './suspects-in-batches.ts';
import type { Mutant } from './types.ts';

/**
 * Every mutant by name: deliberately broken engines, the negative controls of
 * the invariant checkers. Each breaks one guarantee and names the invariant
 * that must catch it and the scenario that exercises it. They live here, in
 * the harness; production code knows nothing of them (docs/mutants.md).
 */
export const MUTANTS = {
  'no-skip-locked': noSkipLocked,
  'dedup-outside-tx': dedupOutsideTx,
  'charge-on-failure': chargeOnFailure,
  'no-jitter': noJitter,
  'no-aging': noAging,
  'no-crash-detection': noCrashDetection,
  'no-fencing': noFencing,
  'crash-on-any-expiry': crashOnAnyExpiry,
  'effect-lock-wait': effectLockWait,
  // The life-of-a-job checks (docs/job-life-checks.md), one each.
  'claim-ignores-backoff': claimIgnoresBackoff,
  'rescue-finishes-live-holder': rescueFinishesLiveHolder,
  'claim-steals-expiring-leases': claimStealsExpiringLeases,
  'fail-one-over-budget': failOneOverBudget,
  'suspects-in-batches': suspectsInBatches,
  'renewal-unfenced': renewalUnfenced,
  'renewal-doubles-lease': renewalDoublesLease,
} satisfies Record<string, Mutant>;

export type MutantName = keyof typeof MUTANTS;

export function isMutantName(name: string): name is MutantName {
  return Object.hasOwn(MUTANTS, name);
}

/** Applies mutant `name` to this process; returns the undo. */
export function applyMutant(name: MutantName): () => void {
  return applyChanges(name, MUTANTS[name]);
}

export { MUTANT_WORKER_SCRIPT } from './apply.ts';
export type { Mutant } from './types.ts';
