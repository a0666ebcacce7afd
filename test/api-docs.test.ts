// docs/api.md against the package's entries: every export of `stampede-queue` and `stampede-queue/testing` is
// documented in its section's table, and nothing is documented there that the entry does not export. Exports are
// read by the TypeScript compiler (types included), the documented names from each row's first column.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const ENTRIES = { 'stampede-queue': 'engine/index.ts', 'stampede-queue/testing': 'engine/testing.ts' } as const;

function exportsOf(files: string[]): Map<string, string[]> {
  const program = ts.createProgram(files, {
    allowImportingTsExtensions: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
  });
  const checker = program.getTypeChecker();
  return new Map(files.map((f) => [f, checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(f)!)!).map((s) => s.name).sort()]));
}

/** The names in the first column of the table under `## \`entry\``: each backticked name, a call's arguments dropped. */
function documented(markdown: string, entry: string): string[] {
  const from = markdown.indexOf(`## \`${entry}\`\n`);
  if (from < 0) throw new Error(`docs/api.md has no section "## \`${entry}\`"`);
  const next = markdown.indexOf('\n## ', from + 1);
  const section = markdown.slice(from, next < 0 ? undefined : next);
  const names: string[] = [];
  for (const line of section.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const first = line.split(' | ')[0];
    for (const m of first.matchAll(/`([A-Za-z_$][\w$]*)(?:\([^`]*\))?`/g)) names.push(m[1]);
  }
  return names.sort();
}

describe('docs/api.md documents each entry of the package exactly', () => {
  const markdown = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
  const files = Object.values(ENTRIES).map((f) => join(ROOT, f));
  const exported = exportsOf(files);

  for (const [entry, file] of Object.entries(ENTRIES)) {
    it(entry, () => {
      const names = exported.get(join(ROOT, file))!;
      const docs = documented(markdown, entry);
      expect(names.length).toBeGreaterThan(0);
      expect({ undocumented: names.filter((n) => !docs.includes(n)), notExported: docs.filter((n) => !names.includes(n)) }).toEqual({ undocumented: [], notExported: [] });
      expect(docs.length, 'a name documented twice').toBe(new Set(docs).size);
    });
  }

  it('the package.json exports map names each entry', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    for (const [entry, file] of Object.entries(ENTRIES)) {
      const key = entry === 'stampede-queue' ? '.' : `./${entry.slice('stampede-queue/'.length)}`;
      expect(pkg.exports[key]?.default).toBe(`./dist/${file.replace(/\.ts$/, '.js')}`);
    }
  });
});
