import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../engine/errors.ts';
import { checkerPlan } from '../harness/checkers/from-scenario.ts';
import { BASE_SCENARIO, defineScenario, enabledCheckers, engineSettingsFor, loadScenarioFile, planScenario, type ScenarioInput } from '../harness/scenario.ts';

const minimal = { name: 'tiny', description: 'a steady trickle; reproduces nothing, proves the harness' };

describe('defineScenario', () => {
  it('merges a partial onto the base: objects key by key, arrays whole', () => {
    const s = defineScenario({
      ...minimal,
      load: { rate: 50 },
      engine: { leaseMs: 5_000, heartbeatMs: 0 },
      lanes: [{ queue: 'high', priority: 9, share: 1 }, { queue: 'low', priority: 0, share: 1 }],
      checkers: { fairness: { maxLowWaitMs: 2_000 }, 'faults-exercised': false },
    });
    expect(s.load).toEqual({ model: 'constant', rate: 50 });
    expect(s.engine).toEqual({ ...BASE_SCENARIO.engine, leaseMs: 5_000, heartbeatMs: 0 });
    expect(s.lanes.map((l) => l.queue)).toEqual(['high', 'low']);
    expect(s.durationS).toBe(BASE_SCENARIO.durationS);
    expect(enabledCheckers(s)).toEqual(['no-job-lost', 'exactly-one-effect', 'no-concurrent-claim', 'dead-letter-routing', 'fairness', 'no-stale-completion', 'red-metrics', 'queue-drained']);
  });

  it('returns a frozen copy and leaves the caller’s objects alone', () => {
    const lanes = [{ queue: 'q', priority: 1, share: 1 }];
    const s = defineScenario({ ...minimal, lanes });
    expect(Object.isFrozen(s.lanes[0])).toBe(true);
    expect(Object.isFrozen(lanes[0])).toBe(false);
    expect(() => ((s as any).seed = 3)).toThrow(TypeError);
  });

  it('overrides a defined scenario, as --seed and --rate do, keeping the rest', () => {
    const s = defineScenario({ ...minimal, load: { model: 'poisson', rate: 200 }, workers: 3 });
    const o = defineScenario({ seed: 99, load: { rate: 10 } }, s);
    expect(o).toMatchObject({ name: 'tiny', seed: 99, workers: 3, load: { model: 'poisson', rate: 10 } });
  });

  it('gives each worker its engine options with its own overrides', () => {
    const s = defineScenario({ ...minimal, workers: 2, engineByWorker: [{}, { mutant: 'no-fencing', pollMs: 50 }] });
    expect(engineSettingsFor(s, 0).mutant).toBeNull();
    expect(engineSettingsFor(s, 1)).toMatchObject({ mutant: 'no-fencing', pollMs: 50, leaseMs: BASE_SCENARIO.engine.leaseMs });
  });
});

describe('scenario validation names the field and what was expected', () => {
  const bad = (partial: Record<string, unknown>, message: string | RegExp) => {
    const run = () => defineScenario({ ...minimal, ...partial } as ScenarioInput);
    expect(run).toThrow(ValidationError);
    expect(run).toThrow(message);
  };

  it('the relays and the archiver', () => {
    const relays = { processes: 2, leaseMs: 3_000, pollMs: 200, deliveryTimeoutMs: 2_500, backoffBaseMs: 200, backoffCapMs: 1_000, retentionMs: 8_000, pruneIntervalMs: 1_000 };
    expect(defineScenario({ ...minimal, relays, archiver: { archiveAfterMs: 4_000, intervalMs: 1_000 } }).relays).toEqual(relays);
    expect(defineScenario({ ...minimal, relays: { ...relays, retentionMs: null } }).relays?.retentionMs).toBeNull();
    bad({ relays: { ...relays, processes: 0 } }, 'scenario.relays.processes: expected an integer >= 1, got 0');
    bad({ relays: { ...relays, deliveryTimeoutMs: 3_000 } }, 'scenario.relays.deliveryTimeoutMs: expected below leaseMs (3000), got 3000');
    bad({ relays: { ...relays, batch: 5 } }, 'scenario.relays.batch: is not a setting here');
    bad({ archiver: { archiveAfterMs: -1, intervalMs: 1_000 } }, 'scenario.archiver.archiveAfterMs: expected an integer >= 1, got -1');
    bad({ mix: [{ kind: 'outbox', share: 1 }] }, 'scenario.relays: is null, but the mix has outbox jobs');
    bad({ archiver: 'yes' }, 'scenario.archiver: expected null or { archiveAfterMs, intervalMs }, got "yes"');
  });

  it('top-level fields', () => {
    bad({ load: { rate: 'fast' } }, 'scenario.load.rate: expected a positive number, got "fast"');
    bad({ load: { model: 'ramp' } }, 'scenario.load.model: expected "constant" or "poisson", got "ramp"');
    bad({ load: { rate: 5, burst: 3 } }, /^scenario.load.burst: is not a field of load; expected one of model, rate$/);
    bad({ speed: 3 }, /^scenario.speed: is not a scenario field; expected one of name, description, seed/);
    bad({ name: 'has space' }, /^scenario.name: expected 1-64 of letters/);
    bad({ description: ' ' }, 'scenario.description: expected a sentence saying which real failure this reproduces');
    bad({ workers: 0 }, 'scenario.workers: expected an integer >= 1, got 0');
    bad({ durationS: -1 }, 'scenario.durationS: expected a positive number, got -1');
    bad({ engine: 'fast' }, 'scenario.engine: expected an object, got "fast"');
    bad({ drainTimeoutS: '30s' }, 'scenario.drainTimeoutS: expected a positive number, got "30s"');
    bad({ handlers: '' }, 'scenario.handlers: expected a module path, got ""');
    bad({ incident: { fromS: 10, toS: 5 } }, 'scenario.incident.toS: expected >= fromS (10), got 5');
    bad({ thresholds: { deadLetterDepthAlert: 0 } }, 'scenario.thresholds.deadLetterDepthAlert: expected an integer >= 1, got 0');
  });

  it('load mix, lanes and engine options', () => {
    bad({ mix: [{ kind: 'normal', share: 1, durationMs: { dist: 'fixed', ms: -5 } }] }, 'scenario.mix[0].durationMs.ms: expected a non-negative number, got -5');
    bad({ mix: [{ kind: 'normal', share: 1, colour: 'red' }] }, /^scenario.mix\[0\].colour: is not a field here/);
    bad({ lanes: [{ queue: 'bad queue', priority: 0, share: 1 }] }, /^scenario.lanes\[0\].queue: "bad queue" is not a queue name/);
    bad({ engine: { mutant: 'no-brakes' } }, /^scenario.engine.mutant: expected null or one of no-skip-locked, /);
    bad({ engine: { leaseMs: 1_000, heartbeatMs: 1_000 } }, /^scenario.engine.heartbeatMs: 1000 ms is not shorter than leaseMs \(1000 ms\)/);
    bad({ engine: { lease: 5 } }, /^scenario.engine.lease: is not a field of engine; expected one of leaseMs,/);
    bad({ workers: 1, engineByWorker: [{}, {}] }, 'scenario.engineByWorker: has 2 entries but the scenario runs 1 workers');
    bad({ engineByWorker: [{ maxAttempts: 0 }] }, 'scenario.engineByWorker[0].maxAttempts: expected an integer >= 1, got 0');
    bad({ engineByWorker: [{ rescue: 'no' }] }, /^scenario.engineByWorker\[0\].rescue: /);
    bad({ workers: 2, engineByWorker: [{ rescue: false }, { rescue: false }] }, /^scenario.engineByWorker: leaves all 2 workers without a lease rescuer/);
    bad({ engine: { rescue: false } }, /^scenario.engine.rescue: leaves all \d+ workers without a lease rescuer/);
    bad({ limitsVia: 'shell' }, "scenario.limitsVia: expected 'api' or 'cli', got \"shell\"");
    bad({ queueBudgets: { mail: 3 } }, 'scenario.queueBudgets.mail: is not a lane\'s queue; expected one of default');
    bad({ queueBudgets: { default: 0 } }, /^scenario.queueBudgets.default: /);
    bad({ queueBudgets: { default: 1001 } }, 'scenario.queueBudgets.default: expected an integer from 1 to 1000, got 1001');
    bad({ engineByWorker: [{}, { preparedStatements: 'off' }] }, 'scenario.engineByWorker[1].preparedStatements: expected true or false, got "off"');
    bad({ engine: { preparedStatements: null } }, 'scenario.engine.preparedStatements: expected true or false, got null');
  });

  it('schedules, faults and checkers', () => {
    const schedule = { id: 'nightly', cron: '30 2 * * *', timezone: 'America/New_York', queue: 'default' };
    bad({ scheduler: { schedules: [schedule] } }, 'scenario.scheduler.nodes: expected at least one scheduler node to materialize the schedules');
    bad({ scheduler: { nodes: [{ skewMs: 0 }], schedules: [{ ...schedule, cron: 'every day' }] } }, /^scenario.scheduler.schedules\[0\].cron: /);
    bad({ scheduler: { nodes: [{ skewMs: 0 }], schedules: [{ ...schedule, timezone: 'Moon/Base' }] } }, /^scenario.scheduler.schedules\[0\].timezone: "Moon\/Base" is not a known IANA time zone/);
    bad({ scheduler: { nodes: [{ skew: 5 }] } }, /^scenario.scheduler.nodes\[0\].skew: is not a field/);
    bad({ faults: [{ fault: 'worker-kill', atS: 5, target: 'worker:2' }] }, 'scenario.faults[0].target: worker 2 does not exist; the scenario runs 2 (0-1)');
    bad({ faults: [{ fault: 'clock-jump', atS: 5, jumpMs: 1 }] }, 'scenario.faults[0].target: the scenario runs no scheduler processes');
    bad({ faults: [{ fault: 'thundering-herd', atS: 5, count: 5, dueAgoS: -90 }] }, 'scenario.faults[0].dueAgoS: expected a number above 0, got -90');
    bad({ faults: [{ fault: 'cli-typos', atS: 5, queue: 'bad queue' }] }, /^scenario.faults\[0\].queue: /);
    bad({ checkers: { 'fast-enough': true } }, /^scenario.checkers.fast-enough: unknown checker; expected one of no-job-lost,/);
    bad({ checkers: { fairness: { maxLowWaitMs: 'soon' } } }, 'scenario.checkers.fairness.maxLowWaitMs: expected a non-negative number, got "soon"');
    const allOff = Object.fromEntries(Object.keys(BASE_SCENARIO.checkers).map((k) => [k, false]));
    bad({ checkers: allOff }, 'scenario.checkers: expected at least one checker turned on; a run that checks nothing proves nothing');
  });

  it('preloaded work and the database clock step', () => {
    bad({ preload: [{ origin: 'someday', count: 1, queue: 'default' }] }, 'scenario.preload[0].origin: expected "delayed" or "retry", got "someday"');
    bad({ preload: [{ origin: 'retry', count: 0, queue: 'default' }] }, 'scenario.preload[0].count: expected an integer >= 1, got 0');
    bad({ preload: [{ origin: 'retry', count: 1, queue: 'nowhere' }] }, 'scenario.preload[0].queue: expected one of the scenario\'s lanes (default), got "nowhere"');
    bad({ preload: [{ origin: 'delayed', count: 1, queue: 'default', dueInS: { fromS: 60, toS: 10 } }] }, 'scenario.preload[0].dueInS.toS: expected >= fromS (60), got 10');
    bad({ preload: [{ origin: 'retry', count: 1, queue: 'default', dueInS: { fromS: 1, toS: 2 } }] }, /^scenario.preload\[0\].dueInS: is not a field of preload\[0\]; expected one of origin, count, queue$/);
    bad({ faults: [{ fault: 'db-clock-jump', atS: 5, jumpMs: -1 }] }, 'scenario.faults[0].jumpMs: expected a number above 0, got -1');
    bad({ faults: [{ fault: 'db-clock-jump', atS: 5 }] }, 'scenario.faults[0].jumpMs: expected exactly one of jumpMs (a step in ms) and minuteAtS (step to a minute beginning at that second of the run), got neither');
    bad({ faults: [{ fault: 'db-clock-jump', atS: 5, jumpMs: 1, minuteAtS: 6 }] }, /got both$/);
    bad({ faults: [{ fault: 'db-clock-jump', atS: 5, minuteAtS: 4 }] }, 'scenario.faults[0].minuteAtS: expected >= atS (5): the minute is placed after the step, got 4');
    // No scheduler to step with it, and none named: the database's clock alone.
    const s = defineScenario({ ...minimal, faults: [{ fault: 'db-clock-jump', atS: 5, jumpMs: 3_600_000 }] } as ScenarioInput);
    expect(planScenario(s).faults[0]).toMatchObject({ fault: 'db-clock-jump', targets: [], params: { jumpMs: 3_600_000 } });
  });

  it('accepts schedules and faults that are right', () => {
    const s = defineScenario({
      ...minimal,
      scheduler: { nodes: [{ skewMs: 0 }, { skewMs: -1_500 }], schedules: [{ id: 'nightly', cron: '30 2 * * *', timezone: 'America/New_York', queue: 'default' }] },
      faults: [{ fault: 'dst', atS: 2, target: 'scheduler:1', zone: 'America/New_York', transition: 'spring-forward' }],
    });
    expect(s.scheduler.nodes[1].skewMs).toBe(-1_500);
  });
});

describe('checkerPlan', () => {
  it('derives bounds from the scenario, and the scenario’s own bounds win', () => {
    const s = defineScenario({
      ...minimal,
      engine: { leaseMs: 4_000, heartbeatMs: 1_000, backoffBaseMs: 2_000, maxAttempts: 4 },
      engineByWorker: [{ leaseMs: 3_000 }],
      incident: { fromS: 10, toS: 20 },
      thresholds: { oldestAgeSloMs: 2_000 },
      faults: [{ fault: 'worker-kill', atS: 5 }, { fault: 'worker-kill', atS: 6 }, { fault: 'dependency-outage', atS: 8, forS: 2 }],
      checkers: { 'oldest-age-slo': { maxRecoverMs: 9_000 }, 'retry-spread': true, 'dead-letter-routing': { maxAttempts: 3 } },
    });
    const { names, bounds } = checkerPlan(s, { expectedCronKeys: ['cron:a:2026-01-01T00:00:00.000Z'] });
    expect(names).toContain('retry-spread');
    expect(names).not.toContain('one-job-per-cron-occurrence');
    expect(bounds['no-concurrent-claim']).toEqual({ leaseMs: 3_000, exceptFailoverLosses: false });
    expect(bounds['dead-letter-routing']).toEqual({ maxAttempts: 3, maxMs: 120_000, poisonKinds: ['poison'], doomedKinds: ['failing'] });
    // Derived from the crash-loop limit, not the attempt budget, so the no-crash-detection mutant cannot pass.
    const derived = checkerPlan(defineScenario({ ...minimal, engine: { maxAttempts: 8, maxCrashes: 3 } })).bounds['dead-letter-routing'];
    expect(derived).toMatchObject({ maxAttempts: 3 });
    expect(bounds['oldest-age-slo']).toEqual({ sloMs: 2_000, incident: { fromMs: 10_000, toMs: 20_000 }, maxRecoverMs: 9_000, queues: [] });
    // The window is in seconds after the load starts: setup before it (workers, preloaded work) moves it on the history's clock.
    expect(checkerPlan(s, { loadStartT: 7_500 }).bounds['oldest-age-slo']).toMatchObject({ incident: { fromMs: 17_500, toMs: 27_500 } });
    expect(bounds['retry-spread']).toMatchObject({ bucketMs: 400 });
    expect(bounds['faults-exercised']).toEqual({ declared: ['worker-kill', 'dependency-outage'] });
    // The incident is in seconds after the load starts; samples are in run time, so it moves with the load's start.
    const late = checkerPlan(s, { loadStartT: 15_000 }).bounds['oldest-age-slo'];
    expect(late).toMatchObject({ incident: { fromMs: 25_000, toMs: 35_000 } });
  });

  it('leaves faults-exercised out of a timeline with no fault: it would judge nothing, and a check over nothing never passes', () => {
    expect(checkerPlan(defineScenario(minimal)).names).not.toContain('faults-exercised');
    expect(checkerPlan(defineScenario({ ...minimal, faults: [{ fault: 'worker-kill', atS: 1 }] })).names).toContain('faults-exercised');
  });
});

describe('loadScenarioFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stampede-scenario-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  const scenarioModule = new URL('../harness/scenario.ts', import.meta.url).pathname;

  it('loads a user’s .ts file whose default export is defineScenario(...) or a plain object', async () => {
    const a = await loadScenarioFile(file('a.ts', `import { defineScenario } from '${scenarioModule}';\nexport default defineScenario({ name: 'mine', description: 'our 2026-03-08 outage', durationS: 5 });\n`));
    expect(a).toMatchObject({ name: 'mine', durationS: 5, load: { rate: 500 } });
    const b = await loadScenarioFile(file('b.ts', `export default { name: 'plain', description: 'a plain object', workers: 3 } as const;\n`));
    expect(b.workers).toBe(3);
  });

  it('refuses a missing file, a missing default export and a malformed field, naming it', async () => {
    await expect(loadScenarioFile(join(dir, 'nope.ts'))).rejects.toThrow(/^scenario file: .*nope.ts does not exist$/);
    await expect(loadScenarioFile(file('c.ts', 'export const scenario = {};\n'))).rejects.toThrow(/c.ts: default export: is missing; expected `export default defineScenario/);
    await expect(loadScenarioFile(file('d.ts', 'export default 42;\n'))).rejects.toThrow(/d.ts: default export: expected a scenario object, got 42/);
    await expect(loadScenarioFile(file('e.ts', `export default { name: 'e', description: 'x', load: { rate: 'fast' } };\n`))).rejects.toThrow(
      'scenario.load.rate: expected a positive number, got "fast"',
    );
    await expect(loadScenarioFile(file('f.ts', 'export default {{;\n'))).rejects.toThrow(/^scenario file: .*f.ts could not be loaded/);
    await expect(loadScenarioFile(file('g.json', '{ "name": "g" }\n'))).rejects.toThrow(
      /^scenario file: .*g.json is not a module; expected a .js, .mjs, .cjs or .ts file whose default export is a scenario$/,
    );
  });
});

describe('planScenario', () => {
  it('gives the same workload and faults for the same seed, and different ones for another', () => {
    const s = defineScenario({ ...minimal, durationS: 2, load: { model: 'poisson', rate: 100 }, faults: [{ fault: 'worker-kill', atS: 0.5, everyS: 0.5, jitterS: 0.2 }] });
    const plan = (scenario: typeof s) => {
      const p = planScenario(scenario);
      return { arrivals: [...p.arrivals], faults: p.faults };
    };
    const a = plan(s);
    expect(a.arrivals.length).toBeGreaterThan(100);
    expect(a.faults.length).toBeGreaterThan(1);
    expect(plan(s)).toEqual(a);
    const b = plan(defineScenario({ seed: 2 }, s));
    expect(b.arrivals).not.toEqual(a.arrivals);
    expect(b.faults).not.toEqual(a.faults);
  });
});

describe('the documented example (docs/scenario-format.md)', () => {
  it('is a valid scenario that loads as a user file', async () => {
    const doc = readFileSync(new URL('../docs/scenario-format.md', import.meta.url), 'utf8');
    const example = /```ts\n([\s\S]*?)```/.exec(doc)![1];
    const dir = mkdtempSync(join(tmpdir(), 'stampede-doc-'));
    const path = join(dir, '2026-03-08-dst.ts');
    // The doc imports the installed package; here that is this repository's harness.
    writeFileSync(path, example.replace("'stampede-queue/harness'", `'${new URL('../harness/index.ts', import.meta.url).pathname}'`));
    const s = await loadScenarioFile(path).finally(() => rmSync(dir, { recursive: true, force: true }));
    expect(s).toMatchObject({ name: 'billing-dst-2026', workers: 3, load: { model: 'poisson', rate: 200 } });
    const { faults } = planScenario(s);
    expect(faults[0]).toMatchObject({ fault: 'dst', dst: { transitionAtMs: Date.UTC(2026, 2, 8, 7) } });
    expect(checkerPlan(s).names).toContain('one-job-per-cron-occurrence');
  });
});
