import { MUTANTS, type MutantName } from '../../engine/mutants.ts';
import type { CheckerName } from '../checkers/index.ts';

/**
 * What the release gate runs, as data. Every built-in scenario runs once at
 * its own (short) default duration and must pass; with `--mutants`, every
 * mutant of engine/mutants.ts runs against the scenario that must catch it
 * and must fail with the invariant it names.
 */
export interface GateEntry {
  /** Scenario name, as `npm run scenario` takes it. */
  scenario: string;
  /** A deliberately broken engine variant; null for the real engine. */
  mutant: MutantName | null;
  /** For a mutant: the invariant that must come out false. */
  mustFail: CheckerName | null;
  /** The scenario's seed, for the replay command of a run that printed none. */
  seed: number;
}

/**
 * The scenario that must catch each mutant. Each is the shortest scenario
 * whose workload exposes the broken guarantee: claims racing under steady
 * load, redelivered slow jobs, a crash-looping poison pill, a burst failing
 * together, a saturated high lane.
 */
export const MUTANT_SCENARIO: Record<MutantName, string> = {
  'no-skip-locked': 'steady',
  'dedup-outside-tx': 'slow-worker-no-heartbeat',
  'charge-on-failure': 'poison-herd',
  'no-jitter': 'retry-storm',
  'no-aging': 'priority-starvation',
  'no-crash-detection': 'poison-herd',
  'no-fencing': 'slow-worker-no-heartbeat',
};

export function scenarioEntries(scenarios: Record<string, { seed: number }>): GateEntry[] {
  return Object.entries(scenarios).map(([scenario, s]) => ({ scenario, mutant: null, mustFail: null, seed: s.seed }));
}

export function mutantEntries(scenarios: Record<string, { seed: number }>): GateEntry[] {
  return (Object.keys(MUTANTS) as MutantName[]).map((mutant) => ({
    scenario: MUTANT_SCENARIO[mutant],
    mutant,
    mustFail: MUTANTS[mutant].caughtBy as CheckerName,
    seed: scenarios[MUTANT_SCENARIO[mutant]].seed,
  }));
}

/** Keeps the entries whose scenario (or mutant) is in `only` (if given) and not in `skip`. */
export function selectEntries(entries: GateEntry[], only: string[], skip: string[]): GateEntry[] {
  const named = (e: GateEntry, list: string[]) => list.includes(e.scenario) || (e.mutant !== null && list.includes(e.mutant));
  return entries.filter((e) => (only.length === 0 || named(e, only)) && !named(e, skip));
}
