// Every command's --help, through the compiled CLI: it names the command as the package publishes it, explains every
// flag its parser accepts (both come from bin/help.ts) and has an Environment section. And no command keeps a flag
// table of its own beside bin/help.ts, which would let the parser and the help drift apart again.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../bin/commands.ts';
import { HELP } from '../bin/help.ts';
import { compiledEntry } from '../engine/supervisor/compiled-entry.ts';

const run = promisify(execFile);

describe('--help of every command', () => {
  it('every command of `stampede-queue --help` has its help declared, and no other', () => {
    expect(Object.keys(HELP).sort()).toEqual(Object.keys(COMMANDS).sort());
  });

  for (const [name, help] of Object.entries(HELP)) {
    it(`${name} --help: usage, every flag its parser takes with its meaning, an Environment section`, async () => {
      const { stdout } = await run(process.execPath, [compiledEntry('bin/stampede.ts'), name, '--help']);
      expect(stdout).toMatch(new RegExp(`^usage: stampede-queue ${name}\\b`));
      for (const [flag, spec] of Object.entries(help.flags)) {
        const line = stdout.split('\n').find((l) => new RegExp(`^\\s+--${flag}\\b`).test(l));
        expect(line, `--${flag} in ${name} --help`).toBeDefined();
        expect(spec.help.length, `--${flag}: its meaning`).toBeGreaterThan(10);
      }
      expect(stdout).toContain('\nEnvironment:\n');
      for (const variable of Object.keys(help.env)) expect(stdout).toMatch(new RegExp(`^\\s+${variable}\\s`, 'm'));
      // The parser's options come from the same table: no inline flag object in the script.
      const source = readFileSync(new URL(`../bin/${name}.ts`, import.meta.url), 'utf8');
      expect(source).toContain(`HELP.${name}`);
      expect(source).not.toMatch(/parseFlags\([^)]*\{\s*\n?\s*['a-z-]+: \{ type:/);
    });
  }
});
