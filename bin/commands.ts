// The subcommands of `stampede`. Each is its own script, which runs when imported
// (with process.argv as `node <script> <flags>`); adding a command is one line here.
export interface Command {
  /** The script, relative to this file; the compiled build has it as .js beside this one. */
  script: string;
  summary: string;
}

export const COMMANDS: Record<string, Command> = {
  postgres: { script: './postgres.ts', summary: 'no Postgres? start an embedded PostgreSQL 18 and print its DATABASE_URL; Ctrl-C stops it' },
  migrate: { script: './migrate.ts', summary: 'apply the schema migrations to DATABASE_URL' },
  worker: { script: './worker.ts', summary: 'run a worker process: claim and run jobs with your handlers module' },
  workers: { script: './workers.ts', summary: 'run N supervised worker processes, restarted with backoff when they die' },
  scheduler: { script: './scheduler.ts', summary: 'run a cron scheduler node: materialize due occurrences into jobs' },
  schedules: { script: './schedules.ts', summary: 'add, list, pause, resume, remove recurring schedules' },
  control: { script: './control.ts', summary: 'operator actions: cancel, retry, dead-letter, redrive, pause/resume a queue, limits, audit' },
  dashboard: { script: './dashboard.ts', summary: "the operator's web dashboard on 127.0.0.1, behind a printed access token" },
  relay: { script: './relay.ts', summary: 'deliver the outbox at least once through your deliver module' },
  archiver: { script: './archiver.ts', summary: 'move finished jobs into the partitioned history table' },
  scenario: { script: './scenario.ts', summary: 'run a chaos scenario against a real Postgres and write its incident report' },
  gate: { script: './gate.ts', summary: 'the release gate: every scenario (or every mutant), JUnit out' },
};
