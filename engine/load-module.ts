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
    return await import(url);
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_UNKNOWN_FILE_EXTENSION' || !/\.[cm]?ts$/.test(absPath)) throw err;
  }
  let tsx: { tsImport: (specifier: string, parent: string) => Promise<Record<string, any>> };
  try {
    tsx = await import('tsx/esm/api');
  } catch {
    throw new Error(`${absPath} is TypeScript, which this Node cannot load on its own; compile it to JavaScript, or install tsx (npm install --save-dev tsx) and stampede loads it through tsx`);
  }
  return tsx.tsImport(url, import.meta.url);
}
