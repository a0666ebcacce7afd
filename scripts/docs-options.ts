// `npm run docs:options`: rewrites docs/configuration.md's option tables from the components' declarations.
import { readFileSync, writeFileSync } from 'node:fs';
import { DECLARATIONS } from '../engine/options/all.ts';
import { withOptionTables } from '../engine/options/docs.ts';

const path = new URL('../docs/configuration.md', import.meta.url);
const before = readFileSync(path, 'utf8');
const after = withOptionTables(before, DECLARATIONS);
if (after !== before) writeFileSync(path, after);
process.stdout.write(after === before ? 'docs/configuration.md: up to date\n' : 'docs/configuration.md: option tables rewritten\n');
