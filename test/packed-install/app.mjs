// A user's first program, in plain JavaScript against the installed package: start a
// real Postgres (the harness's provisioner), migrate, enqueue, run the job to completion
// with a Worker whose handler uses effectOnce, and check the CLI's migrate on the same server.
import { execFileSync } from 'node:child_process';
import { Db, Events, Worker, enqueue, migrate } from 'stampede-queue';
import { provisionPostgres } from 'stampede-queue/harness';

const server = await provisionPostgres({ prefer: process.env.DATABASE_URL ? 'url' : 'embedded' });
const db = new Db({ connectionString: server.adminUrl });
try {
  const applied = await migrate(db);
  await db.query('CREATE TABLE IF NOT EXISTS sent_emails (job_key text PRIMARY KEY)');
  const job = await enqueue(db, 'email', { to: 'ada@example.com' }, { idempotencyKey: `welcome:${process.pid}` });

  const events = new Events();
  const completed = new Promise((resolve) => events.on('job:completed', (e) => e.jobId === job.id && resolve(e)));
  const worker = new Worker({
    db,
    events,
    handlers: {
      email: async (payload, ctx) => {
        await ctx.effectOnce(async (tx) => {
          await tx.query('INSERT INTO sent_emails (job_key) VALUES ($1)', [ctx.job.idempotencyKey]);
        });
      },
    },
  });
  worker.start();
  await completed;
  await worker.stop();

  const row = (await db.query('SELECT state FROM stampede.jobs WHERE id = $1', [job.id])).rows[0];
  const sent = (await db.query('SELECT count(*)::int AS n FROM sent_emails WHERE job_key = $1', [job.idempotencyKey])).rows[0].n;
  if (row.state !== 'done' || sent !== 1) throw new Error(`expected the job done with one effect, got state ${row.state} and ${sent} effect rows`);
  // The CLI on the same, already migrated server: nothing left to apply.
  const cli = execFileSync('npx', ['--no-install', 'stampede-queue', 'migrate'], { env: { ...process.env, DATABASE_URL: server.adminUrl }, encoding: 'utf8' });
  if (!/up to date/.test(cli)) throw new Error(`npx stampede-queue migrate: unexpected output: ${cli}`);
  process.stdout.write(`migrated (${applied.length} migrations), job ${job.id} done with one effect, npx stampede-queue migrate: up to date\n`);
} finally {
  await db.close();
  await server.stop();
}
