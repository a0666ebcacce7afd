// Every command's flags and environment, declared once: each script parses with parserOptions(HELP.x.flags) and
// prints usageText('x', HELP.x), so what a command accepts and what its --help explains cannot drift apart.
// A component option's flag (--lease-ms, --tick-ms...) is not written here: optionFlags() derives it, its help line and
// its default from the component's declaration (engine/options/declare.ts). What is here are the flags that are not
// component options; their defaults are read from the engine's own constants, not retyped.
import { CRON } from '../engine/cron/materializer.ts';
import { DASHBOARD } from '../engine/dashboard/server.ts';
import { DEAD_LETTER_CODES } from '../engine/dead-letters.ts';
import { DEFAULTS } from '../engine/defaults.ts';
import { ARCHIVER } from '../engine/archive/job-archiver.ts';
import { PRUNER } from '../engine/effects/pruner.ts';
import { RELAY } from '../engine/effects/relay.ts';
import { WORKER } from '../engine/worker/options.ts';
import { optionFlags } from './option-flags.ts';
import type { CommandHelp, FlagTable } from './usage.ts';

/** The port `stampede-queue postgres` takes when it is free: the one a newcomer's tools expect. */
export const PREFERRED_POSTGRES_PORT = 5432;

const DATABASE_URL = 'postgres://user:password@host:port/database (required)';
const LOG = 'debug|info|warn|error (default info); the log goes to stderr';
const SKEW = "this node's clock offset in ms (default 0; the harness skews nodes with it)";
const STD_ENV = { DATABASE_URL, STAMPEDE_LOG: LOG };

/** What the scenario runner and the gate read: they start their own Postgres when given none. */
const HARNESS_ENV = {
  DATABASE_URL: 'a server to run on (optional; each run creates and drops its own database there; default: Docker, else an embedded one)',
  STAMPEDE_PG: 'url|container|embedded: force where the server comes from',
  STAMPEDE_PROMETHEUS: "the prometheus binary the run's own Prometheus is started from (default: prometheus on PATH; none: the invariants that read it are inconclusive)",
  STAMPEDE_LOG: LOG,
};

const METRICS = {
  'metrics-port': { type: 'string', value: 'N', help: 'serve Prometheus /metrics on this port (default: off; 0 picks a free one, named in the log)' },
  'metrics-host': { type: 'string', value: 'ADDR', help: 'interface for /metrics (default 127.0.0.1)' },
} as const satisfies FlagTable;

const SEED = { type: 'string', value: 'N', help: 'seed of the retry jitter, for a replay (default: random, printed in the start line)' } as const;

export const HELP = {
  postgres: {
    synopsis: '[--port N] [--data-dir DIR]',
    intro:
      'Starts an embedded PostgreSQL 18 (real binaries from npm) on 127.0.0.1, user postgres, no password, and prints\n' +
      'DATABASE_URL=... on stdout, one line. Ctrl-C (SIGINT) or SIGTERM stops it and removes what it made.',
    flags: {
      port: { type: 'string', value: 'N', help: `TCP port on 127.0.0.1 (default ${PREFERRED_POSTGRES_PORT} when free, else one the kernel picks; 0: always the kernel's pick)` },
      'data-dir': { type: 'string', value: 'DIR', help: 'keep the data in DIR: initialised if absent or empty, reused next time, kept at exit\n(default: a temp dir, removed at exit)' },
    },
    env: { STAMPEDE_LOG: LOG, TMPDIR: 'where its temp dir (sockets; the data too, without --data-dir) is made (default /tmp)' },
    notes: 'exit: 0 stopped by a signal, 2 a bad flag, 1 the server did not start',
  },
  migrate: {
    synopsis: '',
    intro: "Applies stampede's numbered migrations under an advisory lock; a no-op when current.",
    flags: {},
    env: { DATABASE_URL },
    notes: 'exit: 0 applied (or nothing to apply), 1 a migration failed, 2 usage error',
  },
  worker: {
    synopsis: '--handlers <module> [flags]',
    intro: 'One worker process: claims due jobs of the queues its handlers module names and runs them.\nSIGTERM/SIGINT: stop claiming, let in-flight jobs finish within --grace-ms, hand back the rest, exit 0.',
    flags: {
      handlers: {
        type: 'string',
        value: '<module>',
        help: 'required: a .js/.mjs/.cjs module (.ts with tsx installed) whose default export (or `handlers`) is\n{queue: async (payload, ctx) => ...} or a function returning one; CommonJS module.exports works too',
      },
      queues: { type: 'string', value: 'a,b', help: "run only these queues of the module (default: every queue it has a handler for)" },
      ...optionFlags(WORKER),
      'worker-id': { type: 'string', value: 'ID', help: "this worker's name in lease_owner, events and logs (default host:pid:random)" },
      seed: SEED,
      ...METRICS,
      'sample-queue-state': { type: 'boolean', help: 'with --metrics-port: also sample queue depth and oldest age (the workers started with it elect one sampler between them)' },
      'no-prepared-statements': { type: 'boolean', help: 'claim and complete with unnamed statements, for a pooler that drops prepared ones (PgBouncer transaction mode < 1.21)' },
    },
    env: { ...STD_ENV, STAMPEDE_CLOCK_SKEW_MS: SKEW },
    notes: "ipc: {kind:'clock:jump', deltaMs} steps this node's clock, {kind:'clock:rate', rate} sets how fast it runs (the harness)\nexit: 0 drained, 2 a bad flag or handlers module, or a database without the schema, 1 anything else",
  },
  workers: {
    synopsis: '--processes N [--restart-base-ms N] [--restart-cap-ms N] -- <worker flags>',
    intro: 'N supervised `worker` processes, each given the flags after --; one that dies is restarted after a backoff that\ndoubles with each consecutive crash of its slot. One that exits 2 (it refused its flags or its database) stops the fleet.',
    flags: {
      processes: { type: 'string', value: 'N', help: 'required: how many worker processes to keep alive' },
      'restart-base-ms': { type: 'string', value: 'N', help: 'first restart delay after a crash (default 500)' },
      'restart-cap-ms': { type: 'string', value: 'N', help: 'largest restart delay of a crash-looping slot (default 30000)' },
    },
    env: { ...STD_ENV, STAMPEDE_CLOCK_SKEW_MS: `passed on to every worker: ${SKEW}` },
    notes: 'exit: 0 stopped by SIGTERM/SIGINT (every worker drained), 2 a bad flag or a worker refused its flags or database',
  },
  scheduler: {
    synopsis: '[flags]',
    intro: 'A cron materializer node: writes due occurrences of every enabled schedule as jobs, until SIGTERM/SIGINT.',
    flags: {
      'node-id': { type: 'string', value: 'ID', help: "this node's name in logs and application_name (default scheduler-<host>-<pid>)" },
      ...optionFlags(CRON),
      ...METRICS,
    },
    env: { ...STD_ENV, STAMPEDE_CLOCK_SKEW_MS: SKEW },
    notes: "ipc: {kind:'clock:jump', deltaMs} steps this node's clock; {kind:'stop'} stops it (the harness)",
  },
  schedules: {
    synopsis: '<add|list|pause|resume|remove> ...',
    intro: '  add <id> --cron EXPR --queue Q [flags]   add a recurring schedule (or replace the one with that id)\n  list [--json]                            every schedule\n  pause <id> | resume <id> | remove <id>',
    flags: {
      cron: { type: 'string', value: 'EXPR', help: 'add: the cron expression, 5 fields (or 6 with seconds), e.g. "*/5 * * * *"; required' },
      queue: { type: 'string', value: 'Q', help: 'add: the queue its jobs go to; required' },
      tz: { type: 'string', value: 'ZONE', help: 'add: the IANA time zone the expression is read in (default UTC)' },
      payload: { type: 'string', value: 'JSON', help: "add: every occurrence's job payload (default {})" },
      priority: { type: 'string', value: '0-9', help: `add: its jobs' priority (default ${DEFAULTS.priority})` },
      'max-attempts': { type: 'string', value: 'N', help: "add: its jobs' attempt budget (default: the queue's, else 6)" },
      'dst-policy': { type: 'string', value: 'P', help: 'add: what runs on a DST night: shift-first|shift-both|skip-first|skip-both (default shift-first; docs/schedules.md)' },
      'catch-up': { type: 'string', value: 'P', help: 'add: after downtime run none|latest|all of the missed occurrences (default none)' },
      paused: { type: 'boolean', help: 'add: create it paused' },
      json: { type: 'boolean', help: 'list: as JSON' },
    },
    env: { DATABASE_URL },
    notes: 'exit: 0 done, 2 refused input (the message names the flag), 1 anything else',
  },
  control: {
    synopsis: '<command> ... --by WHO --reason WHY',
    intro: [
      '  cancel <job-id>                       pending, failed or claimed -> cancelled (a running handler aborts at its next heartbeat)',
      '  retry <job-id>                        a failed job runs now; a dead one is redriven with a fresh attempt budget',
      '  dead-letter <job-id>   (alias: kill)  dead-letter a live job by hand',
      "  redrive --queue Q [--code C] [--matching TEXT] [--limit N]   redrive Q's dead letters, oldest first",
      '  pause <queue> [--new]                 no worker claims from the queue until resume',
      '  resume <queue>',
      '  limit <queue> [--max-in-flight N|none] [--max-starts-per-second R|none] [--new]   global limits, across all workers',
      '        [--max-in-flight-per-key N|none] [--sequential on|off]   per key (fairnessKey): a cap, which makes the queue fair; one at a time in order',
      "  key-weight <queue> <key> <N|none> [--new]   the key's weight (1-1000) in the queue's fair share; none: back to 1",
      '  show [<queue>] [--json]               paused, limited and fair queues, with their key weights (no --by/--reason needed)',
      '  audit [--job ID] [--queue Q] [--limit N] [--json]',
    ].join('\n'),
    flags: {
      by: { type: 'string', value: 'WHO', help: 'who acts (recorded in stampede.control_audit); required for a change' },
      reason: { type: 'string', value: 'WHY', help: 'why (recorded in the audit); required for a change' },
      queue: { type: 'string', value: 'Q', help: 'redrive: whose dead letters; audit: only this queue' },
      code: { type: 'string', value: 'C', help: `redrive: only dead letters of this code: ${DEAD_LETTER_CODES.join(', ')} (default: any)` },
      matching: { type: 'string', value: 'TEXT', help: 'redrive: only dead letters whose reason contains TEXT (default: all)' },
      limit: { type: 'string', value: 'N', help: 'redrive: at most N (default: all); audit: the newest N entries (default 100)' },
      job: { type: 'string', value: 'ID', help: "audit: only this job's entries" },
      'max-in-flight': { type: 'string', value: 'N|none', help: 'limit: jobs of the queue running at once (none removes it; left out: unchanged)' },
      'max-starts-per-second': { type: 'string', value: 'R|none', help: 'limit: job starts per second (none removes it; left out: unchanged)' },
      'max-in-flight-per-key': { type: 'string', value: 'N|none', help: 'limit: jobs of one fairnessKey running at once; the queue then shares its claims across keys (none removes it; left out: unchanged)' },
      sequential: { type: 'string', value: 'on|off', help: "limit: each key's jobs one at a time in enqueue order (left out: unchanged)" },
      new: { type: 'boolean', help: 'pause, limit, key-weight, redrive: act on a queue that nothing names yet (refused without it, to catch typos)' },
      json: { type: 'boolean', help: 'show, audit: as JSON' },
    },
    env: { DATABASE_URL },
    notes: 'exit: 0 done, 2 refused (a bad flag, or an action that makes no sense for what it found), 1 anything else',
  },
  dashboard: {
    synopsis: '[flags]',
    intro: "The operator's web dashboard; prints the address to open, access token included, on stdout. SIGTERM/SIGINT: stop, exit 0.",
    flags: {
      ...optionFlags(DASHBOARD),
      token: { type: 'string', value: 'T', help: 'the access token, at least 16 characters (default: STAMPEDE_DASHBOARD_TOKEN, else a fresh random one)' },
      'public-origin': { type: 'string', multiple: true, value: 'URL', help: 'also accept POSTs whose Origin is URL (a TLS proxy in front that rewrites Host)' },
    },
    env: { ...STD_ENV, STAMPEDE_DASHBOARD_TOKEN: 'the access token when --token is not given' },
  },
  relay: {
    synopsis: '--deliver <module> [flags]',
    intro: 'An outbox relay: delivers the outbox at least once through your deliver(row, {idempotencyKey, attempt, signal}).\nRun as many as you like (they share the work with SKIP LOCKED). SIGTERM/SIGINT: finish deliveries in flight, exit 0.',
    flags: {
      deliver: { type: 'string', value: '<module>', help: 'required: a module exporting deliver (or a default) as (row, ctx) => Promise, or a function returning one' },
      topics: { type: 'string', value: 'a,b', help: 'deliver only these topics (default: all)' },
      ...optionFlags(RELAY),
      'relay-id': { type: 'string', value: 'ID', help: "this relay's name in leases and logs (default host:pid:random)" },
      seed: SEED,
      'retention-ms': { type: 'string', value: 'N', help: `also prune dedup keys and delivered rows older than this (default: no pruning; the pruner's own default is ${PRUNER.defaults.retentionMs})` },
      ...optionFlags(PRUNER),
    },
    env: STD_ENV,
  },
  archiver: {
    synopsis: '[flags]',
    intro: 'Moves done jobs into the day-partitioned stampede.job_history, creates partitions ahead and drops whole days past\nretention. Safe on several nodes (SKIP LOCKED). SIGTERM/SIGINT: finish the batch in flight, exit 0.',
    flags: {
      ...optionFlags(ARCHIVER),
    },
    env: STD_ENV,
  },
  scenario: {
    synopsis: '<name|path/to/scenario.js> [flags]\n       stampede-queue scenario --list | --list-mutants | --recheck <run dir>',
    intro: 'One chaos scenario against a real Postgres (DATABASE_URL, else Docker, else an embedded one), with its incident report.',
    flags: {
      seed: { type: 'string', value: 'N', help: "the run's seed: the same seed replays the same load and faults (default: the scenario's)" },
      duration: { type: 'string', value: 'SECONDS', help: "how long the load runs (default: the scenario's)" },
      rate: { type: 'string', value: 'JOBS_PER_S', help: "offered load (default: the scenario's)" },
      workers: { type: 'string', value: 'N', help: "worker processes (default: the scenario's)" },
      mutant: { type: 'string', value: 'NAME', help: 'run the engine with this known bug, to see the run fail (--list-mutants)' },
      engine: { type: 'string', value: 'NAME', help: 'judge another engine: stampede (default), graphile-worker or pg-boss (installed beside stampede-queue; docs/peers.md)' },
      'peer-package': { type: 'string', value: 'NAME', help: "with --engine graphile-worker|pg-boss: load the peer from this npm alias of another release (a known bug's control; docs/peers.md)" },
      engines: { type: 'string', value: 'A,B,...', help: 'run the same scenario and seed against each engine and print one side-by-side table (docs/peers.md)' },
      out: { type: 'string', value: 'DIR', help: 'write the report here (default reports/<scenario>/<run-id>)' },
      json: { type: 'boolean', help: 'print the report as JSON instead of the summary' },
      list: { type: 'boolean', help: 'list the built-in scenarios' },
      'list-mutants': { type: 'boolean', help: 'list the mutants and the scenario that catches each' },
      recheck: { type: 'string', value: 'DIR', help: "judge a stored run again from its history, without running it" },
      'alert-rules': { type: 'string', value: 'PATH', help: "your own Prometheus alert rules for the run's Prometheus, instead of ops/prometheus/alerts.yml" },
      'grafana-dashboard': { type: 'string', value: 'PATH', help: "your own Grafana dashboard to query, instead of ops/grafana/stampede.json" },
    },
    env: HARNESS_ENV,
    notes: 'exit: 0 every invariant holds, 1 one was violated, 2 usage or setup error, 3 inconclusive, 130 interrupted',
  },
  gate: {
    synopsis: '[flags]',
    intro: 'The release gate: a short run of every built-in scenario, or with --mutants of every mutant against the scenario\nthat must catch it; a summary table, the replay command of every run that was not ok, and JUnit XML.',
    flags: {
      mutants: { type: 'boolean', help: 'run the mutants instead of the scenarios' },
      only: { type: 'string', value: 'NAME,...', help: 'run only these scenarios or mutants (default: all)' },
      skip: { type: 'string', value: 'NAME,...', help: 'leave these out (default: none)' },
      out: { type: 'string', value: 'DIR', help: 'reports and JUnit go here (default reports/gate)' },
      'run-timeout': { type: 'string', value: 'SECONDS', help: 'give up on one run after this long, as inconclusive (default 480; at least 10)' },
      shard: { type: 'string', value: 'I/N', help: 'run only share I of N of the runs (every N-th from the I-th), for a CI that cannot fit them all (default: all)' },
    },
    env: HARNESS_ENV,
    notes: 'exit: 0 all ok, 1 an invariant violated, a promise judged below its minimum or a mutant survived, 2 usage error, 3 inconclusive, 130 interrupted',
  },
} as const satisfies Record<string, CommandHelp>;
