import pg from 'pg';

/** The same server, another database. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function admin<T>(adminUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, application_name: 'stampede:admin' });
  client.on('error', () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

const ident = (name: string) => {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`not a safe database name: ${name}`);
  return `"${name}"`;
};

/** CREATE DATABASE, optionally as a copy of a template (a migrated template makes a fresh test database in milliseconds). */
export async function createDatabase(adminUrl: string, name: string, template?: string): Promise<string> {
  await admin(adminUrl, (c) => c.query(`CREATE DATABASE ${ident(name)}${template ? ` TEMPLATE ${ident(template)}` : ''}`));
  return withDatabase(adminUrl, name);
}

/** DROP DATABASE, closing whatever is still connected to it. */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await admin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${ident(name)} WITH (FORCE)`));
}
