import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * A `.js` file written as an ES module (`export`, `import`) inside a CommonJS package, which Node refuses to parse: a
 * default `npm init -y` project says `"type": "commonjs"`. The message says the two ways out.
 */
export class EsmInCommonJsError extends Error {
  override name = 'EsmInCommonJsError';

  constructor(
    readonly path: string,
    readonly packageJson: string | undefined,
  ) {
    const mjs = basename(path).replace(/\.js$/, '.mjs');
    super(
      `${path} is an ES module (export/import), and Node loads a .js file of a CommonJS package as CommonJS; ` +
        `rename it to ${mjs} or add "type": "module" to ${packageJson ?? 'package.json'} (or write it as CommonJS: module.exports = ...)`,
    );
  }
}

/** What Node says when CommonJS parsing meets module syntax (Node 20 and 22 alike). */
const MODULE_SYNTAX = /Unexpected token 'export'|Cannot use import statement outside a module|Cannot use 'import\.meta' outside a module/;

/** The package.json that decides a file's module type: the nearest one above it. */
function nearestPackageJson(absPath: string): string | undefined {
  for (let dir = dirname(absPath); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'package.json');
    if (dirname(dir) === dir) return undefined;
  }
}

/** Whether that package.json makes a .js file CommonJS (no "type", or "type": "commonjs"). */
function isCommonJsScope(packageJson: string | undefined): boolean {
  if (packageJson === undefined) return true;
  try {
    return JSON.parse(readFileSync(packageJson, 'utf8')).type !== 'module';
  } catch {
    return true;
  }
}

/**
 * Imports a user's module (handlers, a deliver function, a scenario) by absolute path: an ES module, or a CommonJS
 * one (`module.exports = ...` is then the default export); an ES module in a `.js` file of a CommonJS package is
 * refused with EsmInCommonJsError, which says how to fix it.
 * Compiled stampede runs on plain Node, which cannot load TypeScript itself; a `.ts`
 * module is then loaded through tsx's in-process API when tsx is installed (it is
 * the user's choice, not a dependency of stampede), and refused with what to do when not.
 */
export async function importUserModule(absPath: string): Promise<Record<string, any>> {
  const url = pathToFileURL(absPath).href;
  try {
    return esModuleView(await import(url));
  } catch (err) {
    if (err instanceof SyntaxError && MODULE_SYNTAX.test(err.message) && absPath.endsWith('.js')) {
      const packageJson = nearestPackageJson(absPath);
      if (isCommonJsScope(packageJson)) throw new EsmInCommonJsError(absPath, packageJson);
    }
    if ((err as { code?: string }).code !== 'ERR_UNKNOWN_FILE_EXTENSION' || !/\.[cm]?ts$/.test(absPath)) throw err;
  }
  let tsx: { tsImport: (specifier: string, parent: string) => Promise<Record<string, any>> };
  try {
    tsx = await import('tsx/esm/api');
  } catch {
    throw new Error(`${absPath} is TypeScript, which this Node cannot load on its own; compile it to JavaScript, or install tsx (npm install --save-dev tsx) and stampede loads it through tsx`);
  }
  return esModuleView(await tsx.tsImport(url, import.meta.url));
}

/**
 * A module compiled to CommonJS (tsx's output for a `.ts` file outside an ESM package, or tsc's) comes back through
 * Node's interop with its whole exports object as `default`, and the author's own default export inside it behind
 * `__esModule`: `export default handlers` would read as `{ default: handlers }`, and a module with no default export
 * as one whose default is its named exports. This gives the module as its author wrote it: a default export only
 * where the author wrote one.
 */
function esModuleView(mod: Record<string, any>): Record<string, any> {
  const inner = mod.default;
  const wrapped = inner !== null && typeof inner === 'object' && inner.__esModule === true;
  return wrapped ? { ...mod, default: inner.default } : mod;
}
