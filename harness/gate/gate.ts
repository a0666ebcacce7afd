import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../../engine/clock.ts';
import { figureLines, figuresCsv, readHistory } from './figures.ts';
import { junitXml } from './junit.ts';
import type { GateEntry } from './plan.ts';
import { entryDir, runEntry } from './run-entry.ts';
import { summaryTable } from './table.ts';
import type { EntryResult } from './verdict.ts';
import { LEDGER } from '../promises/ledger.ts';
import { judgePromises, mutantRows, promisesFail } from '../promises/judge.ts';
import { mutantTable, promiseTable, promisesJunit } from '../promises/report.ts';

export interface GateOptions {
  entries: GateEntry[];
  /** Default reports/gate. */
  outDir: string;
  /** JUnit file name under outDir. */
  junitName: string;
  clock: Clock;
  /** Longest one run may take before it is interrupted, ms. */
  runTimeoutMs: number;
  signal: AbortSignal;
  /** Progress lines (stderr). */
  log: (line: string) => void;
}

export interface GateResult {
  results: EntryResult[];
  /** 0 all ok; 1 an invariant violated or a mutant survived; 3 only inconclusive runs besides passes; 130 interrupted. */
  exitCode: number;
  table: string;
  junitPath: string;
  /** Per promise of the ledger (harness/promises/): on a scenario gate, what the runs vouched for; with mutants, what caught each promise's mutants. */
  promises: string;
  promisesPath: string;
}

/**
 * Runs the entries one after another (the machine has two cores; runs in
 * parallel would measure each other), writes the JUnit XML and a figures file,
 * and returns the summary table. One run's failure does not stop the others:
 * a release gate reports everything it found.
 */
export async function runGate(opts: GateOptions): Promise<GateResult> {
  mkdirSync(opts.outDir, { recursive: true });
  const results: EntryResult[] = [];
  const figures: string[] = [];
  for (const [i, entry] of opts.entries.entries()) {
    if (opts.signal.aborted) break;
    const label = entry.mutant ? `${entry.scenario} --mutant ${entry.mutant}` : entry.scenario;
    opts.log(`gate [${i + 1}/${opts.entries.length}] ${label}`);
    const dir = entryDir(opts.outDir, entry);
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    const r = await runEntry(entry, { dir, clock: opts.clock, timeoutMs: opts.runTimeoutMs, signal: opts.signal, onLine: (l) => /^(load|drain)\s/.test(l) || opts.log(`  ${l}`) });
    results.push(r);
    opts.log(`gate [${i + 1}/${opts.entries.length}] ${label}: ${r.outcome} in ${(r.durationMs / 1000).toFixed(0)} s: ${r.reason}`);
    if (r.summary && existsSync(join(dir, 'history.jsonl'))) {
      try {
        const history = readHistory(dir);
        const lines = figureLines(entry.scenario, history);
        if (lines.length) {
          figures.push(`## ${label}\n\n\`\`\`\n${lines.join('\n')}\n\`\`\`\n`);
          writeFileSync(join(dir, 'figures.csv'), figuresCsv(history));
          for (const l of lines) opts.log(`  ${l}`);
        }
      } catch (err) {
        opts.log(`  figures unavailable: ${(err as Error).message}`);
      }
    }
  }
  const junitPath = join(opts.outDir, opts.junitName);
  writeFileSync(junitPath, junitXml(results, 'stampede release gate'));
  if (figures.length) writeFileSync(join(opts.outDir, opts.junitName === 'junit.xml' ? 'figures.md' : 'figures-mutants.md'), `# Gate figures (per second from the load start)\n\n${figures.join('\n')}`);
  const table = summaryTable(results);
  const mutants = results.some((r) => r.entry.mutant !== null);
  const promiseRows = mutants ? [] : judgePromises(LEDGER, results);
  const byMutant = mutants ? mutantRows(LEDGER, results) : [];
  const promises = mutants ? mutantTable(byMutant) : promiseTable(promiseRows);
  const promisesPath = join(opts.outDir, mutants ? 'promises-mutants.json' : 'promises.json');
  writeFileSync(promisesPath, JSON.stringify(mutants ? byMutant : promiseRows, null, 2) + '\n');
  if (!mutants) writeFileSync(join(opts.outDir, 'junit-promises.xml'), promisesJunit(promiseRows));
  const exitCode = opts.signal.aborted
    ? 130
    : results.some((r) => r.outcome === 'fail') || promisesFail(promiseRows)
      ? 1
      : results.some((r) => r.outcome === 'inconclusive')
        ? 3
        : 0;
  return { results, exitCode, table, junitPath, promises, promisesPath };
}
