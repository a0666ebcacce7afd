import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHECKERS } from '../harness/checkers/index.ts';
import { MUTANTS } from '../harness/mutants/index.ts';
import { auditLedger, type LedgerWorld } from '../harness/promises/audit.ts';
import { documentedOptions, documentedVerbs, readmeGuarantees } from '../harness/promises/documented.ts';
import { LEDGER } from '../harness/promises/ledger.ts';
import { SCENARIOS } from '../scenarios/index.ts';

/**
 * The ledger (harness/promises/ledger.ts) against the tree: the docs, the
 * options the components accept, the verbs, the invariants, the scenarios and
 * the mutants. The audit is pure; this reads the world it is given.
 */
const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : null);

function world(): LedgerWorld {
  return {
    doc: read,
    testFile: read,
    guarantees: readmeGuarantees(readFileSync('README.md', 'utf8')),
    options: documentedOptions(),
    verbs: documentedVerbs(),
    invariants: Object.keys(CHECKERS),
    scenarios: Object.fromEntries(Object.entries(SCENARIOS).map(([name, s]) => [name, Object.keys(s.checkers)])),
    mutants: Object.fromEntries(Object.entries(MUTANTS).map(([name, m]) => [name, { caughtBy: m.caughtBy, scenario: m.scenario }])),
  };
}

describe('the promise ledger', () => {
  it('covers every documented option, verb, guarantee, seed paragraph, invariant and mutant, and names only what exists', () => {
    expect(auditLedger(LEDGER, world())).toEqual([]);
  });

  it('reads the surface it must cover from the code and the README, not from a list of its own', () => {
    const w = world();
    expect(w.guarantees.map((g) => g.lead)).toContain('Enqueue is durable when it returns.');
    expect(w.guarantees.length).toBeGreaterThanOrEqual(7);
    expect(w.options).toEqual(expect.arrayContaining(['Worker.leaseMs', 'Worker.claimAhead', 'Queue.maxStartsPerSecond', 'Schedule.dstPolicy=skip-both', 'JobArchiver.archiveAfterMs']));
    expect(w.options).not.toContain('Worker.db');
    expect(w.verbs).toEqual(expect.arrayContaining(['control.cancel', 'control.redrive', 'dashboard.redrive-bulk', 'cli.control.key-weight']));
  });

  // The negative controls: the audit fails on each kind of drift.
  it('fails when an entry is removed: what it alone covered is reported', () => {
    const without = LEDGER.filter((e) => e.id !== 'retries-full-jitter');
    const problems = auditLedger(without, world());
    expect(problems).toEqual(expect.arrayContaining(['option Worker.backoffBaseMs is documented but no promise covers it', 'mutant no-jitter is the negative control of no promise', 'invariant retry-spread judges no promise']));
  });

  it('fails when the docs no longer say what an entry quotes, or a new guarantee has no entry', () => {
    const w = world();
    const readme = readFileSync('README.md', 'utf8')
      .replace('Enqueue is durable when it returns.', 'Enqueue is mostly durable.')
      .replace('## Guarantees\n', '## Guarantees\n\n- **Jobs run in order.** Whatever happens.\n');
    const problems = auditLedger(LEDGER, { ...w, doc: (f) => (f === 'README.md' ? readme : read(f)), guarantees: readmeGuarantees(readme) });
    expect(problems).toEqual(
      expect.arrayContaining(['promise enqueue-durable: README.md no longer says "Enqueue is durable when it returns."', 'README guarantee "Jobs run in order." has no promise quoting it']),
    );
  });

  it('fails when a new option, verb or invariant appears without an entry', () => {
    const w = world();
    const problems = auditLedger(LEDGER, { ...w, options: [...w.options, 'Worker.newOption'], verbs: [...w.verbs, 'control.purge'], invariants: [...w.invariants, 'new-invariant'] });
    expect(problems).toEqual(
      expect.arrayContaining(['option Worker.newOption is documented but no promise covers it', 'verb control.purge exists but no promise covers it', 'invariant new-invariant judges no promise']),
    );
  });

  it('fails when a test-vouched entry does not say why the gate does not vouch for it', () => {
    const entry = LEDGER.find((e) => e.id === 'alert-rules-unit-tested')!;
    const silent = { ...entry, vouch: { ...entry.vouch, notInGate: ' ' } } as typeof entry;
    expect(auditLedger([...LEDGER.filter((e) => e !== entry), silent], world())).toEqual([
      'promise alert-rules-unit-tested: vouched by a test, and does not say why no gate scenario vouches for it (notInGate)',
    ]);
  });

  it('fails when an entry names what does not exist, or a mutant caught by another promise’s invariant', () => {
    const entry = LEDGER.find((e) => e.id === 'aging-no-starvation')!;
    const broken = { ...entry, vouch: { by: 'gate' as const, judgedBy: [{ scenario: 'steady', invariant: 'fairness' as const }], minJudged: 0, mutants: ['no-jitter' as const] } };
    const problems = auditLedger([...LEDGER.filter((e) => e !== entry), broken], world());
    expect(problems).toEqual(
      expect.arrayContaining([
        'promise aging-no-starvation: scenario steady does not check fairness',
        'promise aging-no-starvation: minJudged must be at least 1 (a promise judged over nothing is not vouched for)',
        "promise aging-no-starvation: mutant no-jitter is caught by retry-spread, not by one of this promise's invariants (fairness)",
      ]),
    );
  });
});
