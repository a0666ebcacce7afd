// The build's second half: the files the compiled JavaScript reads at run time
// (named SQL beside the module that loads it, the reaper script, the migrations)
// copied into dist/ at the same relative paths, so `new URL('./x.sql', import.meta.url)`
// finds them in the build as it does in the source tree; and the bin made executable
// (npm does that for an installed package, but `npx stampede-queue` in this repository runs the file itself).
import { chmodSync, cpSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// What the code reads at run time besides its own modules; a new kind of file (say a page's .html) goes here.
const ASSET = /\.(sql|mjs)$/;

function copyAssets(dir) {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const rel = join(dir, entry.name);
    if (entry.isDirectory()) copyAssets(rel);
    else if (ASSET.test(entry.name)) cpSync(join(root, rel), join(root, 'dist', rel));
  }
}

// reports/ itself holds run output: only its renderer is code. Named folders instead
// (`node scripts/copy-assets.mjs bench`: the compiled bench, tsconfig.bench.json) copy only those.
const named = process.argv.slice(2);
for (const dir of named.length ? named : ['bin', 'engine', 'harness', 'reports/render', 'scenarios', 'migrations']) copyAssets(dir);
chmodSync(join(root, 'dist/bin/stampede.js'), 0o755);
