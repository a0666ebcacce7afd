// The options declared once (engine/options/declare.ts) and what is derived from them must agree: the committed
// docs tables, the CLI flags with their help, and the flags the harness gives its workers.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { HELP } from '../bin/help.ts';
import { parserOptions } from '../bin/usage.ts';
import { DECLARATIONS } from '../engine/options/all.ts';
import { optionArgv } from '../engine/options/declare.ts';
import { tabledComponents, withOptionTables } from '../engine/options/docs.ts';
import { WORKER } from '../engine/worker/options.ts';

const doc = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');

describe('options declared once', () => {
  it('docs/configuration.md has a generated table of every declared component, equal to what the declarations give (npm run docs:options)', () => {
    expect(tabledComponents(doc).sort()).toEqual(DECLARATIONS.map((d) => d.component).sort());
    expect(doc).toBe(withOptionTables(doc, DECLARATIONS));
  });

  it('a marker naming no component is refused, naming the ones there are', () => {
    expect(() => withOptionTables('<!-- options:Wroker -->\n<!-- /options -->', DECLARATIONS)).toThrow(/options:Wroker -->: no such component; expected one of Worker,/);
  });

  it("every option with a flag is in its command's --help with its declared doc and default", () => {
    const commands = { Worker: HELP.worker, CronMaterializer: HELP.scheduler, OutboxRelay: HELP.relay, Pruner: HELP.relay, JobArchiver: HELP.archiver, DashboardServer: HELP.dashboard } as const;
    for (const decl of DECLARATIONS) {
      for (const spec of Object.values(decl.options)) {
        if (spec.flag === undefined) continue;
        const flags: Record<string, { help: string }> = commands[decl.component as keyof typeof commands].flags;
        expect(flags[spec.flag]?.help, `--${spec.flag} of ${decl.component}`).toMatch(new RegExp(`^${spec.doc.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(default `));
      }
    }
  });

  it("the arguments built from a worker's option values are flags the worker's parser takes, with the values given", () => {
    const argv = optionArgv(WORKER, { leaseMs: 2_000, heartbeatMs: 500, timeoutMs: null, maxCrashes: 4, shutdownGraceMs: 2_000 });
    const { values } = parseArgs({ args: argv, options: parserOptions(HELP.worker.flags), strict: true });
    expect(values).toEqual({ 'lease-ms': '2000', 'heartbeat-ms': '500', 'max-crashes': '4', 'grace-ms': '2000' });
  });

  it('a value the worker cannot be given by a flag is refused, not dropped', () => {
    expect(() => optionArgv(WORKER, { suspectPatienceMs: 250 })).toThrow(/^suspectPatienceMs: is not a Worker option with a CLI flag; expected one of concurrency,/);
    expect(() => optionArgv(WORKER, { maxAttempts: 3 })).toThrow(/^maxAttempts: is not a Worker option with a CLI flag/);
  });
});
