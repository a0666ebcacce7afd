import { normalise, type Guarantee } from './documented.ts';
import type { PromiseEntry } from './types.ts';

/** Everything the audit compares the ledger with; the test reads it from the tree, unit tests hand-write it. */
export interface LedgerWorld {
  /** A documentation file's text, or null when there is no such file. */
  doc(file: string): string | null;
  /** A test file's text, or null. */
  testFile(file: string): string | null;
  guarantees: Guarantee[];
  options: string[];
  verbs: string[];
  /** Every invariant by name. */
  invariants: string[];
  /** Each built-in scenario's invariants. */
  scenarios: Record<string, string[]>;
  /** Every mutant: the invariant that must catch it (null: none yet) and the scenario it runs on. */
  mutants: Record<string, { caughtBy: string | null; scenario: string }>;
}

const SEED_PARAGRAPHS = [1, 2, 3, 4, 5, 6] as const;

/**
 * What is wrong between the ledger and the project, one sentence each; empty
 * when they agree. Pure. Both ways: every documented option, verb, guarantee,
 * seed paragraph, invariant and mutant has an entry, and every entry names
 * only things that exist, quotes only what the docs say, and pairs each
 * invariant with a scenario that runs it and each mutant with an invariant of
 * its own that catches it.
 */
export function auditLedger(ledger: readonly PromiseEntry[], world: LedgerWorld): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  const covered = { options: new Set<string>(), verbs: new Set<string>(), seed: new Set<number>(), guarantees: new Set<string>(), invariants: new Set<string>(), mutants: new Set<string>() };
  const optionSet = new Set(world.options);
  const verbSet = new Set(world.verbs);
  const docs = new Map<string, string | null>();
  const docText = (file: string) => {
    if (!docs.has(file)) docs.set(file, world.doc(file) === null ? null : normalise(world.doc(file)!));
    return docs.get(file)!;
  };

  for (const e of ledger) {
    const at = `promise ${e.id}`;
    if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(e.id)) problems.push(`${at}: id is not kebab-case`);
    if (ids.has(e.id)) problems.push(`${at}: id used twice`);
    ids.add(e.id);
    if (e.documented.length === 0) problems.push(`${at}: documented nowhere`);
    for (const { file, quote } of e.documented) {
      const text = docText(file);
      const q = normalise(quote);
      if (text === null) problems.push(`${at}: quotes ${file}, which does not exist`);
      else if (!text.includes(q)) problems.push(`${at}: ${file} no longer says "${quote}"`);
      if (file === 'README.md') {
        for (const g of world.guarantees) if (g.text.includes(q)) covered.guarantees.add(g.lead);
      }
    }
    for (const o of e.covers.options ?? []) {
      if (!optionSet.has(o)) problems.push(`${at}: covers option ${o}, which no component has`);
      covered.options.add(o);
    }
    for (const v of e.covers.verbs ?? []) {
      if (!verbSet.has(v)) problems.push(`${at}: covers verb ${v}, which does not exist`);
      covered.verbs.add(v);
    }
    for (const s of e.covers.seed ?? []) covered.seed.add(s);

    const v = e.vouch;
    if (v.by === 'gate') {
      if (v.judgedBy.length === 0) problems.push(`${at}: vouched by the gate but names no scenario and invariant`);
      if (!(v.minJudged >= 1)) problems.push(`${at}: minJudged must be at least 1 (a promise judged over nothing is not vouched for)`);
      const invariants = new Set<string>(v.judgedBy.map((p) => p.invariant));
      for (const { scenario, invariant } of v.judgedBy) {
        covered.invariants.add(invariant);
        if (!world.invariants.includes(invariant)) problems.push(`${at}: names invariant ${invariant}, which does not exist`);
        const runs = world.scenarios[scenario];
        if (!runs) problems.push(`${at}: names scenario ${scenario}, which is not built in`);
        else if (!runs.includes(invariant)) problems.push(`${at}: scenario ${scenario} does not check ${invariant}`);
      }
      if (v.mutants.length === 0) problems.push(`${at}: no mutant shows its invariants catching its bug`);
      for (const m of v.mutants) {
        covered.mutants.add(m);
        const mutant = world.mutants[m];
        if (!mutant) problems.push(`${at}: names mutant ${m}, which does not exist`);
        else if (mutant.caughtBy === null || !invariants.has(mutant.caughtBy)) {
          problems.push(`${at}: mutant ${m} is caught by ${mutant.caughtBy ?? 'nothing yet'}, not by one of this promise's invariants (${[...invariants].join(', ')})`);
        } else if (!v.judgedBy.some((p) => p.scenario === mutant.scenario && p.invariant === mutant.caughtBy)) {
          problems.push(`${at}: mutant ${m} runs on ${mutant.scenario}, where this promise does not judge ${mutant.caughtBy}: add that pair`);
        }
      }
    } else if (v.by === 'test') {
      for (const i of v.invariants ?? []) {
        covered.invariants.add(i);
        if (!world.invariants.includes(i)) problems.push(`${at}: names invariant ${i}, which does not exist`);
      }
      const text = world.testFile(v.file);
      if (text === null) problems.push(`${at}: names test file ${v.file}, which does not exist`);
      else for (const t of v.tests) if (!text.includes(t)) problems.push(`${at}: ${v.file} has no test titled "${t}"`);
      if (v.tests.length === 0) problems.push(`${at}: names no test`);
      if (!v.notInGate?.trim()) problems.push(`${at}: vouched by a test, and does not say why no gate scenario vouches for it (notInGate)`);
    } else if (!v.why.trim()) {
      problems.push(`${at}: a gap must say why`);
    }
  }

  for (const o of world.options) if (!covered.options.has(o)) problems.push(`option ${o} is documented but no promise covers it`);
  for (const v of world.verbs) if (!covered.verbs.has(v)) problems.push(`verb ${v} exists but no promise covers it`);
  for (const g of world.guarantees) if (!covered.guarantees.has(g.lead)) problems.push(`README guarantee "${g.lead}" has no promise quoting it`);
  for (const s of SEED_PARAGRAPHS) if (!covered.seed.has(s)) problems.push(`paragraph ${s} of the source document has no promise`);
  for (const i of world.invariants) if (!covered.invariants.has(i)) problems.push(`invariant ${i} judges no promise`);
  for (const [m, { caughtBy }] of Object.entries(world.mutants)) {
    if (caughtBy !== null && !covered.mutants.has(m)) problems.push(`mutant ${m} is the negative control of no promise`);
  }
  return problems;
}
