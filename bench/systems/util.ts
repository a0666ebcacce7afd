import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import pg from 'pg';

/** The version in an installed package's package.json. */
export function packageVersion(name: string): string {
  const require = createRequire(import.meta.url);
  try {
    const path = require.resolve(`${name}/package.json`);
    return JSON.parse(readFileSync(path, 'utf8')).version;
  } catch {
    // Packages whose exports hide package.json: find it beside the entry point.
    const entry = require.resolve(name);
    const root = entry.slice(0, entry.lastIndexOf(`/node_modules/${name}/`) + `/node_modules/${name}/`.length);
    return JSON.parse(readFileSync(`${root}package.json`, 'utf8')).version;
  }
}

/** One connection of the bench's own (counts and installs), connected; a dropped connection fails its next query, not the process. */
export async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'stampede:bench' });
  client.on('error', () => {});
  await client.connect();
  return client;
}

/** Runs one query on a short-lived connection (counts and installs, never on a timed path). */
export async function once<T extends pg.QueryResultRow = any>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = await connect(url);
  try {
    return (await client.query<T>(text, params as any[])).rows;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Opens `n` connections of a pool now, so the first timed query does not pay for connecting. */
export async function warm(pool: pg.Pool, n: number): Promise<void> {
  const clients = await Promise.all(Array.from({ length: n }, () => pool.connect()));
  for (const c of clients) c.release();
}
