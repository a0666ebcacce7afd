// stampede-queue scenario <name|./file.js> [--seed N] [--duration S] [--rate R] [--workers N]
//                                  [--mutant NAME] [--out DIR] [--json]
//                                  [--alert-rules PATH] [--grafana-dashboard PATH]
// stampede-queue scenario --list | --list-mutants | --recheck <run dir>
// Exit codes: 0 every invariant holds; 1 one was violated; 2 usage or setup
// error; 3 inconclusive (a fault that never bit, a queue that never drained);
// 130 interrupted (the partial report is still written).
import { existsSync } from 'node:fs';
import { createLogger } from '../engine/log.ts';
import { MUTANTS, isMutantName } from '../harness/mutants/index.ts';
import { ValidationError } from '../engine/errors.ts';
import { defineScenario, loadScenarioFile, type Scenario, type ScenarioInput } from '../harness/scenario.ts';
import { recheck } from '../harness/runner/recheck.ts';
import { runScenario, type RunOptions, type RunResult } from '../harness/runner/run.ts';
import { ENGINES, peerAdapter } from '../harness/engines/index.ts';
import { keyFigures, renderComparison, type EngineColumn } from '../harness/engines/compare.ts';
import { runPeerScenario } from '../harness/engines/peer-run.ts';
import { PeerMissingError } from '../harness/engines/peer-common.ts';
import { ENGINE_NAMES, isEngineName, type EngineName } from '../harness/engines/types.ts';
import { printSummary } from '../harness/runner/summary.ts';
import { fmtRateNumber } from '../reports/render/format.ts';
import { PEER_CONTROLS, SCENARIOS } from '../scenarios/index.ts';
import { databaseUrl, errorText, exitOnHelp, interruptCounter, intFlag, parseFlags, UsageError } from './cli-args.ts';
import { HELP } from './help.ts';
import { parserOptions, usageText } from './usage.ts';

const USAGE = usageText('scenario', HELP.scenario);

/** Every scenario `scenario` runs by name: the gate's, then the peers' known-bug controls. */
const NAMED: Record<string, Scenario> = { ...SCENARIOS, ...PEER_CONTROLS };

function listScenarios(): string {
  const width = Math.max(...Object.keys(NAMED).map((n) => n.length));
  return Object.values(NAMED)
    .map((s) => `  ${s.name.padEnd(width)}  ${s.description.split(/(?<=\.)\s/)[0]}`)
    .join('\n');
}

async function resolveScenario(ref: string): Promise<Scenario> {
  if (Object.hasOwn(NAMED, ref)) return NAMED[ref];
  if (/[/\\]|\.[cm]?[jt]s$/.test(ref)) return loadScenarioFile(ref);
  throw new UsageError(`unknown scenario "${ref}"; expected one of these, or a path to your own scenario file:\n${listScenarios()}`);
}

async function main(): Promise<number> {
  exitOnHelp(process.argv.slice(2), USAGE);
  const { values, positionals } = parseFlags(
    process.argv.slice(2),
    parserOptions(HELP.scenario.flags),
    true,
  );
  if (values.list) {
    process.stdout.write(`scenarios:\n${listScenarios()}\n`);
    return 0;
  }
  if (values['list-mutants']) {
    for (const [name, m] of Object.entries(MUTANTS)) {
      const by = m.caughtBy ? `caught by ${m.caughtBy}` : `awaits ${m.awaits}`;
      process.stdout.write(`  ${name.padEnd(20)} ${by.padEnd(32)} ${m.breaks}\n`);
    }
    return 0;
  }
  if (values.recheck) return recheck(values.recheck, Boolean(values.json));
  if (positionals.length !== 1) throw new UsageError(positionals.length ? `expected one scenario, got ${positionals.join(' ')}` : 'which scenario? name one');
  const base = await resolveScenario(positionals[0]);
  if (values.mutant !== undefined && !isMutantName(values.mutant)) {
    throw new UsageError(`--mutant: unknown mutant "${values.mutant}"; expected one of ${Object.keys(MUTANTS).join(', ')}`);
  }
  const overrides: ScenarioInput = {};
  const seed = intFlag(values, 'seed');
  const duration = intFlag(values, 'duration', 1);
  const rate = intFlag(values, 'rate', 1);
  const workers = intFlag(values, 'workers', 1);
  if (seed !== undefined) overrides.seed = seed;
  if (duration !== undefined) overrides.durationS = duration;
  if (rate !== undefined) overrides.load = { rate };
  if (workers !== undefined) overrides.workers = workers;
  if (values.mutant) overrides.engine = { mutant: values.mutant as never };
  let scenario: Scenario;
  try {
    scenario = defineScenario(overrides, base);
  } catch (err) {
    if (err instanceof ValidationError) throw new UsageError(err.message);
    throw err;
  }
  const ops = { alertRules: fileFlag(values, 'alert-rules'), grafanaDashboard: fileFlag(values, 'grafana-dashboard') };
  if (values.engine !== undefined && values.engines !== undefined) throw new UsageError('give --engine (one engine) or --engines (a side-by-side run), not both');
  const engines = values.engines !== undefined ? parseEngines('engines', values.engines) : parseEngines('engine', values.engine ?? 'stampede');
  if (values.engines === undefined) refuseInapplicable(engines[0], scenario);
  const peerPackage = parsePeerPackage(values['peer-package'], values.engines === undefined ? engines[0] : undefined);
  const replay = [
    'npx stampede-queue scenario',
    positionals[0],
    `--seed ${scenario.seed}`,
    ...(duration !== undefined ? [`--duration ${duration}`] : []),
    ...(rate !== undefined ? [`--rate ${rate}`] : []),
    ...(workers !== undefined ? [`--workers ${workers}`] : []),
    ...(values.mutant ? [`--mutant ${values.mutant}`] : []),
    ...(ops.alertRules ? [`--alert-rules ${ops.alertRules}`] : []),
    ...(ops.grafanaDashboard ? [`--grafana-dashboard ${ops.grafanaDashboard}`] : []),
    ...(peerPackage ? [`--peer-package ${peerPackage}`] : []),
  ].join(' ');
  // The adapters, and the worker processes they start, load the peer through this name (harness/engines/peer-common.ts).
  if (peerPackage) process.env.STAMPEDE_PEER_PACKAGE = peerPackage;
  if (process.env.DATABASE_URL) databaseUrl(); // a given server must at least be a well-formed URL
  const interrupt = new AbortController();
  const interrupts = interruptCounter();
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupts() > 1) process.exit(130); // a second Ctrl-C: the reaper still removes the server
    if (interrupt.signal.aborted) return;
    process.stderr.write(`\n${sig}: stopping the run, tearing down, writing a partial report (Ctrl-C again to quit at once)\n`);
    interrupt.abort(new Error(`interrupted by ${sig}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const log = createLogger('scenario');
  process.stderr.write(`scenario ${scenario.name}: seed ${scenario.seed}, ${fmtRateNumber(scenario.load.rate)} jobs/s for ${scenario.durationS} s, ${scenario.workers} workers${scenario.engine.mutant ? `, MUTANT ${scenario.engine.mutant}` : ''}\n`);
  const run = (engine: EngineName, o: RunOptions): Promise<RunResult> => {
    const peer = peerAdapter(engine);
    return peer ? runPeerScenario({ ...o, engine: peer }) : runScenario(o);
  };
  const withEngine = (engine: EngineName) => (engine === 'stampede' ? replay : `${replay} --engine ${engine}`);
  if (values.engines !== undefined) {
    const cols: EngineColumn[] = [];
    let worst = 0;
    for (const engine of engines) {
      const a = ENGINES[engine];
      const skipped = a.inapplicable(scenario);
      const base = { engine, version: a.version(), command: withEngine(engine) };
      if (skipped) {
        cols.push({ ...base, verdict: 'not run', invariants: [], figures: null, skipped: `not run: ${skipped}` });
        continue;
      }
      process.stderr.write(`-- ${engine} ${a.version()}\n`);
      const r = await run(engine, { scenario, replayCommand: withEngine(engine), log, interrupt: interrupt.signal, ops, ...(values.out ? { outDir: `${values.out}/${engine}` } : {}) });
      cols.push({ ...base, verdict: r.verdict, invariants: r.invariants, figures: keyFigures(r.history, r.final, scenario.thresholds.oldestAgeSloMs) });
      worst = Math.max(worst, r.exitCode);
      if (interrupt.signal.aborted) break;
    }
    process.stdout.write(renderComparison(scenario.name, scenario.seed, cols));
    // The table is the product: a violation in a peer is a finding, not this command's failure, unless the user asked for one engine.
    return interrupt.signal.aborted ? 130 : worst === 2 ? 2 : 0;
  }
  const result = await run(engines[0], { scenario, replayCommand: withEngine(engines[0]), log, interrupt: interrupt.signal, ops, ...(values.out ? { outDir: values.out } : {}) });
  if (values.json) process.stdout.write(JSON.stringify(result.report, null, 2) + '\n');
  else printSummary(result.report, result.dir);
  return result.exitCode;
}

/** `--engine` / `--engines`: engine names from the list, or a usage error naming the flag and the choices. */
function parseEngines(flag: string, value: unknown): EngineName[] {
  const names = String(value).split(',').map((n) => n.trim()).filter(Boolean);
  if (names.length === 0) throw new UsageError(`--${flag}: expected one or more of ${ENGINE_NAMES.join(', ')}, got nothing`);
  for (const n of names) if (!isEngineName(n)) throw new UsageError(`--${flag}: unknown engine "${n}"; expected one of ${ENGINE_NAMES.join(', ')}`);
  return names as EngineName[];
}

/**
 * `--peer-package NAME`: the peer's package under another name, an npm alias of
 * another release (`graphile-worker-0-17-2@npm:graphile-worker@0.17.2`): how a
 * known bug of a past release is shown to the harness. Only with one peer engine.
 */
function parsePeerPackage(value: unknown, engine: EngineName | undefined): string | undefined {
  if (value === undefined) return undefined;
  const name = String(value);
  if (engine === undefined || engine === 'stampede') throw new UsageError('--peer-package: needs --engine graphile-worker or --engine pg-boss (one peer engine)');
  if (!/^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/.test(name)) throw new UsageError(`--peer-package: expected an npm package name (an alias such as ${engine}-old), got ${JSON.stringify(name)}`);
  return name;
}

/** A scenario that cannot run against the engine asked for: exit 2, saying why. */
function refuseInapplicable(engine: EngineName, scenario: Scenario): void {
  const why = ENGINES[engine].inapplicable(scenario);
  if (why) throw new UsageError(why, false);
}

/** A file flag's path, refused with exit 2 when nothing is there to read. */
function fileFlag(values: Record<string, unknown>, name: string): string | undefined {
  const path = values[name];
  if (path === undefined) return undefined;
  if (typeof path !== 'string' || !existsSync(path)) throw new UsageError(`--${name}: ${String(path)} does not exist; expected the path of your own file`);
  return path;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    const usage = err instanceof UsageError || err instanceof PeerMissingError;
    process.stderr.write(`stampede scenario: ${usage ? '' : 'setup failed: '}${errorText(err)}\n` + (usage ? `${USAGE}\n` : ''));
    if (!usage && process.env.STAMPEDE_LOG === 'debug') process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(2);
  },
);

