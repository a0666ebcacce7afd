// npm run gate -- [--mutants] [--only a,b] [--skip a,b] [--out DIR] [--run-timeout S]
//
// The release gate: a short run of every built-in scenario (each at its own
// default duration), or with --mutants every mutant of harness/mutants/
// against the scenario that must catch it. Prints a summary table and the
// replay command of every run that was not ok; writes JUnit XML
// (reports/gate/junit.xml, or junit-mutants.xml) with one test case per
// scenario-invariant pair, and a per-promise verdict of the ledger (reports/gate/promises.json,
// junit-promises.xml). Exit codes: 0 all ok; 1 an invariant violated, a promise
// judged over fewer events than its minimum, or a
// mutant survived; 2 usage error; 3 nothing failed but a run was
// inconclusive; 130 interrupted.
import { systemClock } from '../engine/clock.ts';
import { mutantEntries, scenarioEntries, selectEntries, shardEntries } from '../harness/gate/plan.ts';
import { runGate } from '../harness/gate/gate.ts';
import { notOkDetails } from '../harness/gate/table.ts';
import { SCENARIOS } from '../scenarios/index.ts';
import { MUTANTS } from '../harness/mutants/index.ts';
import { databaseUrl, exitOnHelp, interruptCounter, intFlag, parseFlags, UsageError } from './cli-args.ts';
import { HELP } from './help.ts';
import { parserOptions, usageText } from './usage.ts';

const USAGE = usageText('gate', HELP.gate);

function list(v: unknown): string[] {
  return typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : [];
}

async function main(): Promise<number> {
  exitOnHelp(process.argv.slice(2), USAGE);
  const { values } = parseFlags(process.argv.slice(2), parserOptions(HELP.gate.flags));
  const known = new Set([...Object.keys(SCENARIOS), ...Object.keys(MUTANTS)]);
  for (const name of [...list(values.only), ...list(values.skip)]) {
    if (!known.has(name)) throw new UsageError(`unknown scenario or mutant "${name}"; expected one of ${[...known].join(', ')}`);
  }
  const all = values.mutants ? mutantEntries(SCENARIOS) : scenarioEntries(SCENARIOS);
  let entries = selectEntries(all, list(values.only), list(values.skip));
  if (values.shard !== undefined) {
    const m = /^(\d+)\/(\d+)$/.exec(values.shard);
    if (!m || Number(m[1]) < 1 || Number(m[1]) > Number(m[2])) throw new UsageError(`--shard: expected I/N with 1 <= I <= N (e.g. 2/3), got "${values.shard}"`);
    entries = shardEntries(entries, Number(m[1]), Number(m[2]));
  }
  if (entries.length === 0) throw new UsageError('--only/--skip/--shard left nothing to run');
  if (process.env.DATABASE_URL) databaseUrl(); // a given server must at least be a well-formed URL
  const interrupt = new AbortController();
  const interrupts = interruptCounter();
  const onSignal = () => {
    const n = interrupts();
    if (n > 1) process.exit(130);
    if (interrupt.signal.aborted) return;
    process.stderr.write('\ngate: interrupted; stopping the run in flight (its partial report is kept)\n');
    interrupt.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const started = systemClock.now();
  const gate = await runGate({
    entries,
    outDir: values.out ?? 'reports/gate',
    junitName: values.mutants ? 'junit-mutants.xml' : 'junit.xml',
    clock: systemClock,
    runTimeoutMs: (intFlag(values, 'run-timeout', 10) ?? 480) * 1000,
    signal: interrupt.signal,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const secs = Math.round((systemClock.now() - started) / 1000);
  const what = values.mutants ? 'mutants' : 'scenarios';
  const counts = { pass: 0, fail: 0, inconclusive: 0 };
  for (const r of gate.results) counts[r.outcome]++;
  process.stdout.write(`\nstampede gate (${what}): ${counts.pass} ok, ${counts.fail} failed, ${counts.inconclusive} inconclusive of ${gate.results.length} in ${Math.floor(secs / 60)} min ${secs % 60} s\n\n`);
  process.stdout.write(gate.table);
  process.stdout.write(`\n${values.mutants ? 'Each promise\'s mutants, and the invariant that caught each' : 'Each promise of the ledger (harness/promises/ledger.ts): events its invariants judged in this gate, against its minimum'}:\n\n`);
  process.stdout.write(gate.promises);
  process.stdout.write(notOkDetails(gate.results));
  process.stdout.write(`\nJUnit: ${gate.junitPath}; promises: ${gate.promisesPath}\n`);
  return gate.exitCode;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    const usage = err instanceof UsageError;
    process.stderr.write(`stampede gate: ${usage ? '' : 'failed: '}${(err as Error).message}\n${usage ? `${USAGE}\n` : ''}`);
    process.exit(2);
  },
);
