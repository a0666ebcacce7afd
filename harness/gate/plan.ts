import { MUTANTS, type MutantName } from '../mutants/index.ts';
import type { CheckerName } from '../checkers/index.ts';

/**
 * What the release gate runs, as data. Every built-in scenario runs once at
 * its own (short) default duration and must pass; with `--mutants`, every
 * mutant of harness/mutants/ runs against the scenario it names
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

export function scenarioEntries(scenarios: Record<string, { seed: number }>): GateEntry[] {
  return Object.entries(scenarios).map(([scenario, s]) => ({ scenario, mutant: null, mustFail: null, seed: s.seed }));
}

export function mutantEntries(scenarios: Record<string, { seed: number }>): GateEntry[] {
  // A mutant no checker catches yet (caughtBy null) cannot be judged by the gate; --list-mutants shows it.
  return (Object.keys(MUTANTS) as MutantName[]).flatMap((mutant) => {
    const { scenario, caughtBy } = MUTANTS[mutant];
    if (caughtBy === null) return [];
    if (!scenarios[scenario]) throw new Error(`mutant ${mutant} names scenario "${scenario}", which is not built in`);
    return [{ scenario, mutant, mustFail: caughtBy, seed: scenarios[scenario].seed }];
  });
}

/** Keeps the entries whose scenario (or mutant) is in `only` (if given) and not in `skip`. */
export function selectEntries(entries: GateEntry[], only: string[], skip: string[]): GateEntry[] {
  const named = (e: GateEntry, list: string[]) => list.includes(e.scenario) || (e.mutant !== null && list.includes(e.mutant));
  return entries.filter((e) => (only.length === 0 || named(e, only)) && !named(e, skip));
}

/**
 * Share `index` of `count` of the entries (`--shard 2/4`): every count-th
 * entry from the index-th, so the shares are disjoint, together are the whole
 * run, and each mixes scenarios. CI runs a rotating share when the whole
 * mutant run does not fit its budget; the release command runs them all.
 */
export function shardEntries(entries: GateEntry[], index: number, count: number): GateEntry[] {
  if (!Number.isInteger(count) || count < 1 || !Number.isInteger(index) || index < 1 || index > count) {
    throw new Error(`shard ${index}/${count}: expected i/n with 1 <= i <= n`);
  }
  return entries.filter((_, i) => i % count === index - 1);
}
