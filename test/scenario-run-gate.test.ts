// The release gate's pure parts: how a run is judged (a scenario must pass, a
// mutant must be caught by its invariant), and the JUnit XML it writes.
import { describe, expect, it } from 'vitest';
import { junitXml } from '../harness/gate/junit.ts';
import { notOkDetails } from '../harness/gate/table.ts';
import { mutantEntries, scenarioEntries, selectEntries, shardEntries, type GateEntry } from '../harness/gate/plan.ts';
import { judge, type EntryResult, type ReportedInvariant, type RunSummary } from '../harness/gate/verdict.ts';
import { MUTANTS } from '../harness/mutants/index.ts';
import { SCENARIOS } from '../scenarios/index.ts';

const inv = (name: string, pass: boolean | 'unknown') => ({ name, pass, figure: `${name} figure`, bound: `${name} bound` });
const summary = (invariants: ReportedInvariant[]): RunSummary => ({
  scenario: { name: 'retry-storm' },
  seed: 53,
  verdict: 'x',
  replayCommand: 'npm run scenario retry-storm -- --seed 53 --mutant no-jitter',
  interrupted: false,
  invariants,
});
const scenario: GateEntry = { scenario: 'retry-storm', mutant: null, mustFail: null, seed: 53 };
const mutant: GateEntry = { scenario: 'retry-storm', mutant: 'no-jitter', mustFail: 'retry-spread', seed: 53 };

describe('gate verdicts', () => {
  it('a scenario passes only when every invariant holds; false fails it, unknown is inconclusive', () => {
    expect(judge(scenario, 0, summary([inv('no-job-lost', true), inv('retry-spread', true)])).outcome).toBe('pass');
    expect(judge(scenario, 1, summary([inv('no-job-lost', true), inv('retry-spread', false)]))).toEqual({ outcome: 'fail', reason: 'violated: retry-spread' });
    expect(judge(scenario, 3, summary([inv('faults-exercised', 'unknown')])).outcome).toBe('inconclusive');
    expect(judge(scenario, 2, null, 'no database').outcome).toBe('fail');
  });

  it('a mutant is caught only by its own invariant coming out false; green means it survived', () => {
    expect(judge(mutant, 1, summary([inv('retry-spread', false)])).outcome).toBe('pass');
    const survived = judge(mutant, 0, summary([inv('retry-spread', true)]));
    expect(survived.outcome).toBe('fail');
    expect(survived.reason).toContain('SURVIVED');
    // Another invariant failing does not count as catching it.
    expect(judge(mutant, 1, summary([inv('retry-spread', true), inv('no-job-lost', false)])).outcome).toBe('fail');
    expect(judge(mutant, 3, summary([inv('retry-spread', 'unknown')])).outcome).toBe('inconclusive');
  });

  it('plans every scenario, and every mutant against a scenario that checks its invariant', () => {
    expect(scenarioEntries(SCENARIOS).map((e) => e.scenario)).toEqual(Object.keys(SCENARIOS));
    const ms = mutantEntries(SCENARIOS);
    // Every mutant some checker catches; the others await their checker (caughtBy null).
    const judged = Object.entries(MUTANTS).filter(([, m]) => m.caughtBy !== null).map(([name]) => name);
    expect(ms.map((e) => e.mutant).sort()).toEqual(judged.sort());
    for (const e of ms) {
      const s = SCENARIOS[e.scenario];
      expect(s, `${e.mutant} runs on ${e.scenario}`).toBeDefined();
      expect(s.checkers[e.mustFail!], `${e.scenario} checks ${e.mustFail}`).toBeTruthy();
    }
    expect(selectEntries(ms, ['no-jitter'], []).map((e) => e.scenario)).toEqual(['retry-storm']);
    expect(selectEntries(scenarioEntries(SCENARIOS), [], ['db-restart']).some((e) => e.scenario === 'db-restart')).toBe(false);
  });
});

describe('JUnit XML', () => {
  const result = (entry: GateEntry, s: RunSummary | null, outcome: EntryResult['outcome']): EntryResult => ({
    entry,
    exitCode: 1,
    durationMs: 12_345,
    summary: s,
    dir: 'reports/gate/runs/x',
    outcome,
    reason: 'why',
  });

  it('one test case per scenario-invariant pair; a false invariant is a failure, unknown an error', () => {
    const xml = junitXml([result(scenario, summary([inv('no-job-lost', true), inv('retry-spread', false), inv('queue-drained', 'unknown')]), 'fail')], 'gate');
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="gate" tests="3" failures="1" errors="1"/);
    expect(xml).toContain('<testcase classname="stampede.gate.scenario.retry-storm" name="no-job-lost" time="0"/>');
    expect(xml).toMatch(/name="retry-spread" time="0">\n\s+<failure message="retry-spread violated">retry-spread figure; bound: retry-spread bound\nreplay: npm run scenario/);
    expect(xml).toContain('<property name="replay" value="npm run scenario retry-storm -- --seed 53 --mutant no-jitter"/>');
    // Balanced tags: every opened testcase/testsuite is closed.
    expect((xml.match(/<testcase /g) ?? []).length).toBe(3);
    expect((xml.match(/<testsuite /g) ?? []).length).toBe((xml.match(/<\/testsuite>/g) ?? []).length);
  });

  it("in a mutant's suite the must-catch invariant fails the case when it held, and text is escaped", () => {
    const s = summary([inv('retry-spread', true)]);
    s.invariants[0].figure = 'peak <5 & "ok"';
    const xml = junitXml([result(mutant, s, 'fail')], 'gate');
    expect(xml).toContain('name="retry-spread (must catch no-jitter)"');
    expect(xml).toContain('<failure message="mutant no-jitter survived: retry-spread stayed green">peak &lt;5 &amp; &quot;ok&quot;');
    const caught = junitXml([result(mutant, summary([inv('retry-spread', false)]), 'pass')], 'gate');
    expect(caught).toContain('failures="0" errors="0"');
  });

  it('carries what each invariant judged as properties of its test case', () => {
    const s = summary([{ ...inv('no-job-lost', true), judged: { n: 1234, what: 'acknowledged <or> recovered enqueues' } }, inv('retry-spread', false)]);
    const xml = junitXml([result(scenario, s, 'fail')], 'gate');
    expect(xml).toContain(
      '<testcase classname="stampede.gate.scenario.retry-storm" name="no-job-lost" time="0">\n      <properties>\n' +
        '        <property name="judged" value="1234"/>\n        <property name="judged.what" value="acknowledged &lt;or&gt; recovered enqueues"/>\n' +
        '      </properties>\n    </testcase>',
    );
    // A summary written before checkers counted what they judged has no such property.
    expect(xml).toMatch(/name="retry-spread" time="0">\n\s+<failure /);
  });

  it('ends the output with what was not ok: each invariant that broke or could not judge, its figure and first example', () => {
    const s = summary([inv('no-job-lost', true), { ...inv('retry-spread', false), examples: [{ jobId: 7 }, { jobId: 8 }] }, inv('queue-drained', 'unknown')]);
    const text = notOkDetails([result(scenario, s, 'fail'), { ...result(mutant, null, 'fail'), reason: 'setup error', error: 'no database\nstack' }]);
    expect(text).toContain('retry-storm/retry-spread: VIOLATED: retry-spread figure; first example: {"jobId":7}');
    expect(text).toContain('retry-storm/queue-drained: inconclusive: queue-drained figure');
    expect(text).not.toContain('no-job-lost');
    expect(text).toContain('retry-storm --mutant no-jitter: setup error: no database\n');
    expect(notOkDetails([result(scenario, summary([inv('no-job-lost', true)]), 'pass')])).toBe('');
  });

  it('a run that printed no summary is one errored case', () => {
    const xml = junitXml([{ ...result(scenario, null, 'fail'), error: 'setup failed: no database' }], 'gate');
    expect(xml).toContain('name="run"');
    expect(xml).toContain('<error message="why">setup failed: no database</error>');
  });
});

describe('gate shards', () => {
  const all = mutantEntries(SCENARIOS);
  it('splits the mutant run into disjoint shares that together are the whole run', () => {
    const shares = [1, 2, 3].map((i) => shardEntries(all, i, 3));
    expect(shares.flat().map((e) => e.mutant).sort()).toEqual(all.map((e) => e.mutant).sort());
    expect(new Set(shares.flat().map((e) => e.mutant)).size).toBe(all.length);
    for (const s of shares) expect(s.length).toBeGreaterThanOrEqual(Math.floor(all.length / 3));
  });
  it('refuses a share outside 1..n', () => {
    expect(() => shardEntries(all, 0, 3)).toThrow(/1 <= i <= n/);
    expect(() => shardEntries(all, 4, 3)).toThrow(/1 <= i <= n/);
  });
});
