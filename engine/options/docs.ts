// docs/configuration.md's option tables, generated from the declarations between markers:
//   <!-- options:Worker -->  ...generated table...  <!-- /options -->
// `npm run docs:options` rewrites them; test/options-docs.test.ts fails while the committed docs differ.
import { defaultShown, type OptionsDeclaration } from './declare.ts';

const BLOCK = /(<!-- options:([A-Za-z]+) -->\n)[\s\S]*?(<!-- \/options -->)/g;

/** One component's options as a markdown table: name, default, unit, CLI flag, meaning. */
export function optionsTable(decl: OptionsDeclaration): string {
  const rows = Object.entries(decl.options).map(([name, spec]) => {
    const meaning = [spec.doc, spec.perQueue ? 'per queue too (`queues`)' : undefined, spec.note].filter(Boolean).join('; ');
    const cells = [`\`${name}\``, defaultShown(spec, (n) => n.toLocaleString('en-US')), spec.unit ?? '', spec.flag ? `\`--${spec.flag}\`` : '', meaning];
    return `| ${cells.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`;
  });
  return ['| option | default | unit | flag | meaning |', '| --- | --- | --- | --- | --- |', ...rows].join('\n');
}

/** `markdown` with every marked block replaced by its component's table; a marker naming no component is refused. */
export function withOptionTables(markdown: string, decls: readonly OptionsDeclaration[]): string {
  return markdown.replace(BLOCK, (_all, open: string, component: string, close: string) => {
    const decl = decls.find((d) => d.component === component);
    if (!decl) throw new Error(`<!-- options:${component} -->: no such component; expected one of ${decls.map((d) => d.component).join(', ')}`);
    return `${open}${optionsTable(decl)}\n${close}`;
  });
}

/** The components `markdown` has a table of. */
export function tabledComponents(markdown: string): string[] {
  return [...markdown.matchAll(BLOCK)].map((m) => m[2]);
}
