// The table's own queue-name rule (migrations/0011_cheap_queue_check.sql):
// spelled without a regular expression, it must accept and refuse exactly the
// names the original rule `^[A-Za-z0-9_.:-]{1,128}$` did, on insert and on update.
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
