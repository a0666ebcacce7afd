import type { EntryResult } from './verdict.ts';

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!).replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');

function suiteName(r: EntryResult): string {
  return r.entry.mutant ? `mutant.${r.entry.mutant}` : `scenario.${r.entry.scenario}`;
}

/**
 * JUnit XML: one testsuite per run, one testcase per scenario-invariant pair
 * (what every CI system can show). A scenario's false invariant is a
 * <failure>, an inconclusive one an <error>. In a mutant's suite the roles
 * turn around: the invariant that must catch it fails the case when it held.
 * A run that produced no summary is one errored case named `run`.
 */
export function junitXml(results: readonly EntryResult[], name: string): string {
  const suites = results.map((r) => {
    const cls = `stampede.gate.${suiteName(r)}`;
    const seconds = (r.durationMs / 1000).toFixed(1);
    const replay = r.summary?.replayCommand ?? '';
    const cases: string[] = [];
    if (!r.summary) {
      cases.push(`    <testcase classname="${esc(cls)}" name="run" time="${seconds}">\n      <error message="${esc(r.reason)}">${esc(r.error ?? '')}</error>\n    </testcase>`);
    } else {
      for (const inv of r.summary.invariants) {
        const mustFail = r.entry.mustFail === inv.name;
        const caseName = mustFail ? `${inv.name} (must catch ${r.entry.mutant})` : inv.name;
        const text = `${inv.figure}; bound: ${inv.bound}\nreplay: ${replay}`;
        let body = '';
        if (mustFail) {
          if (inv.pass === true) body = `      <failure message="${esc(`mutant ${r.entry.mutant} survived: ${inv.name} stayed green`)}">${esc(text)}</failure>\n`;
          else if (inv.pass === 'unknown') body = `      <error message="${esc(`inconclusive: ${inv.name} could not decide`)}">${esc(text)}</error>\n`;
        } else if (r.entry.mutant === null) {
          if (inv.pass === false) body = `      <failure message="${esc(`${inv.name} violated`)}">${esc(text)}</failure>\n`;
          else if (inv.pass === 'unknown') body = `      <error message="${esc(`${inv.name} inconclusive`)}">${esc(text)}</error>\n`;
        } else {
          // A mutant's other invariants are reported, not judged: a broken engine may break more than one thing.
          body = `      <system-out>${esc(`${inv.pass === true ? 'held' : inv.pass === false ? 'violated' : 'inconclusive'}: ${text}`)}</system-out>\n`;
        }
        // How many events the invariant judged, so a CI can tell a check that held from one with nothing to hold over.
        const judged = inv.judged
          ? `      <properties>\n        <property name="judged" value="${inv.judged.n}"/>\n        <property name="judged.what" value="${esc(inv.judged.what)}"/>\n      </properties>\n`
          : '';
        const open = `    <testcase classname="${esc(cls)}" name="${esc(caseName)}" time="0"`;
        cases.push(judged || body ? `${open}>\n${judged}${body}    </testcase>` : `${open}/>`);
      }
    }
    const failures = cases.filter((c) => c.includes('<failure')).length;
    const errors = cases.filter((c) => c.includes('<error')).length;
    return (
      `  <testsuite name="${esc(suiteName(r))}" tests="${cases.length}" failures="${failures}" errors="${errors}" skipped="0" time="${seconds}">\n` +
      `    <properties>\n      <property name="seed" value="${r.summary?.seed ?? ''}"/>\n      <property name="replay" value="${esc(replay)}"/>\n      <property name="report" value="${esc(r.dir)}"/>\n    </properties>\n` +
      `${cases.join('\n')}\n  </testsuite>`
    );
  });
  const count = (tag: string) => suites.reduce((n, s) => n + Number(new RegExp(`${tag}="(\\d+)"`).exec(s)![1]), 0);
  const total = (results.reduce((n, r) => n + r.durationMs, 0) / 1000).toFixed(1);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="${esc(name)}" tests="${count('tests')}" failures="${count('failures')}" errors="${count('errors')}" time="${total}">\n${suites.join('\n')}\n</testsuites>\n`;
}
