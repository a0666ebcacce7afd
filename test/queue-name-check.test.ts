// The table's own queue-name rule (migrations/0011_cheap_queue_check.sql, a
// trigger since 0013_lean_claim_writes.sql): spelled without a regular
// expression, it must accept and refuse exactly the names the original rule
// `^[A-Za-z0-9_.:-]{1,128}$` did, on insert and on update, with the CHECK's
// SQLSTATE and constraint name.
import { expect, it } from 'vitest';
import { freshDatabase } from './support/db.ts';

const { db } = await freshDatabase();

const ACCEPTED = ['a', 'Q.u:e-u_e9', '-', '..', 'A-Z', 'x'.repeat(128)];
const REFUSED = ['', 'a b', 'é', 'a\n', '\na', 'a\tb', 'a/b', "a'b", 'a$', '^a', '[a]', 'ａ', 'x'.repeat(129)];

it('accepts exactly the names the regular expression accepts, and refuses the rest on insert', async () => {
  const names = [...ACCEPTED, ...REFUSED];
  const re = (await db.query(`SELECT n, n ~ '^[A-Za-z0-9_.:-]{1,128}$' AS ok FROM unnest($1::text[]) n`, [names])).rows;
  expect(re.filter((r) => r.ok).map((r) => r.n)).toEqual(ACCEPTED);
  for (const name of ACCEPTED) await db.query('INSERT INTO stampede.jobs (queue) VALUES ($1)', [name]);
  for (const name of REFUSED) {
    await expect(db.query('INSERT INTO stampede.jobs (queue) VALUES ($1)', [name]), JSON.stringify(name)).rejects.toMatchObject({
      code: '23514',
      constraint: 'jobs_queue_check',
    });
  }
});

it('refuses a bad name written by an update too', async () => {
  const id = (await db.query(`INSERT INTO stampede.jobs (queue) VALUES ('fine') RETURNING id`)).rows[0].id;
  await expect(db.query(`UPDATE stampede.jobs SET queue = 'not fine' WHERE id = $1`, [id])).rejects.toMatchObject({ code: '23514', constraint: 'jobs_queue_check' });
});

it('is judged when a name is written, not on updates that leave the name alone (claims, heartbeats, completions)', async () => {
  // A row whose name breaks the rule can only come from a writer that bypassed it: here, with the trigger switched off.
  const c = await db.pool.connect();
  let id: string;
  try {
    await c.query('BEGIN');
    await c.query('ALTER TABLE stampede.jobs DISABLE TRIGGER jobs_queue_name');
    id = (await c.query(`INSERT INTO stampede.jobs (queue) VALUES ('bad name') RETURNING id`)).rows[0].id;
    await c.query('ALTER TABLE stampede.jobs ENABLE TRIGGER jobs_queue_name');
    await c.query('COMMIT');
  } catch (err) {
    await c.query('ROLLBACK');
    throw err;
  } finally {
    c.release();
  }
  // The CHECK of 0011 refused this UPDATE: it re-ran the rule on every update of the row.
  await db.query('UPDATE stampede.jobs SET priority = 3, updated_at = now() WHERE id = $1', [id]);
  await expect(db.query('UPDATE stampede.jobs SET queue = queue WHERE id = $1', [id])).rejects.toMatchObject({ code: '23514', constraint: 'jobs_queue_check' });
  await db.query('DELETE FROM stampede.jobs WHERE id = $1', [id]);
});
