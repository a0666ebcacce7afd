// The README's first example, as a reader copies it: the first ```js block after `npm install stampede-queue`.
// Run directly (`npx tsx test/support/readme-example.ts`), it prints that block, for the packed-install test.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export const README = new URL('../../README.md', import.meta.url);

export function firstExample(readme = readFileSync(README, 'utf8')): string {
  const install = readme.indexOf('npm install stampede-queue');
  if (install === -1) throw new Error('README.md has no `npm install stampede-queue` line');
  const block = /```js\n([\s\S]*?)```/.exec(readme.slice(install));
  if (!block) throw new Error('README.md has no ```js block after `npm install stampede-queue`');
  return block[1];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.stdout.write(firstExample());
