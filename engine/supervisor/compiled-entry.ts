import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// This file is engine/supervisor/compiled-entry.{ts,js}: two levels below the source
// root in the repository, or below dist/ in the build (and in an installed package).
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const DIST = fileURLToPath(new URL(FROM_SOURCE ? '../../dist/' : '../../', import.meta.url));

/**
 * The compiled JavaScript of a module of this package, given by its source path
 * (`bin/worker.ts`, `harness/handlers.ts`): child processes run it with plain
 * `node`, never through a TypeScript loader, whether the caller runs compiled or
 * from source (the tests). From source it needs the build (`npm run build`).
 */
export function compiledEntry(sourcePath: string): string {
  const path = DIST + sourcePath.replace(/^\.\//, '').replace(/\.ts$/, '.js');
  if (!existsSync(path)) throw new Error(`${path} does not exist; build the package first (npm run build)`);
  return path;
}
