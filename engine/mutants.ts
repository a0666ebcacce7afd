/**
 * Deliberately broken engine variants: the negative controls for the
 * harness's invariant checkers. Each breaks one guarantee, and names the
 * invariant that must catch it. Never set one in production; the worker logs
 * a warning when one is on.
 */
export const MUTANTS = {
  'no-skip-locked': {
    breaks: 'claims lock rows without SKIP LOCKED and without re-checking state, so two workers can take the same job',
    caughtBy: 'no-concurrent-claim',
  },
  'dedup-outside-tx': {
    breaks: "effectOnce writes the dedup key in a separate commit after the effect",
    caughtBy: 'exactly-one-effect',
  },
  'charge-on-failure': {
    breaks: 'attempts are charged only when a failure is recorded, so a job that kills its worker never uses one up and is never counted as a crash',
    caughtBy: 'dead-letter-routing',
  },
  'no-jitter': {
    breaks: 'retries wait exactly the backoff ceiling (no full jitter), so a shared outage retries in lockstep',
    caughtBy: 'retry-spread',
  },
  'no-aging': {
    breaks: 'claims order by priority alone, so a saturated high lane starves the low lane',
    caughtBy: 'fairness',
  },
  'no-crash-detection': {
    breaks: 'a job that keeps killing its worker is retried like any other failure instead of dead-lettered early',
    caughtBy: 'dead-letter-routing',
  },
  'no-fencing': {
    breaks: 'completion is not fenced on the lease token, so a worker that lost its lease overwrites the new owner',
    caughtBy: 'no-stale-completion',
  },
} as const;

export type MutantName = keyof typeof MUTANTS;

export function isMutantName(name: string): name is MutantName {
  return Object.hasOwn(MUTANTS, name);
}
