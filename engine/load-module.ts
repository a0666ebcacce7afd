import { pathToFileURL } from 'node:url';

/**
 * Imports a user's module (handlers, a deliver function, a scenario) by absolute path.
 * Compiled stampede runs on plain Node, which cannot load TypeScript itself; a `.ts`
 * module is then loaded through tsx's in-process API when tsx is installed (it is
 * the user's choice, not a dependency of stampede), and refused with what to do when not.
 */
export async function importUserModule(absPath: string): Promise<Record<string, any>> {
  const url = pathToFileURL(absPath).href;
  try {
    return esModuleView(await import(url));
  } catch (err) {
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
