// Operator actions on the database named by DATABASE_URL (engine/control).
// Every change needs --by (who) and --reason (why), recorded in
// stampede.control_audit. Reference: docs/operating.md.
//
// Exit status: 0 done, 2 refused (a bad flag, or an action that makes no
// sense for what it found: the message says which and why), 1 anything else.
import { Db } from '../engine/db.ts';
import type { DeadLetterCode } from '../engine/dead-letters.ts';
import {
  cancelJob,
  ControlRefusedError,
  deadLetterJob,
  listAudit,
  listQueueControls,
  pauseQueue,
  redriveDeadLetters,
  resumeQueue,
  retryJob,
  setQueueLimits,
  getQueueControl,
  type JobActionResult,
  type QueueControl,
} from '../engine/control/index.ts';
import { ValidationError } from '../engine/errors.ts';
import { redactSecrets } from '../engine/redact.ts';
import { unknownQueueReason, UnknownQueueError } from '../engine/control/errors.ts';
import { databaseUrl, integerText, intFlag, parseFlags, refuseExtraArguments, UsageError } from './cli-args.ts';
import { HELP } from './help.ts';
import { HELP_FLAG, parserOptions, usageText } from './usage.ts';

const USAGE = usageText('control', HELP.control);
const FLAGS = parserOptions({ ...HELP.control.flags, ...HELP_FLAG });

/** How many arguments each command takes after its name (show: at most one queue). */
const ARGUMENTS: Record<string, number> = { cancel: 1, retry: 1, kill: 1, 'dead-letter': 1, redrive: 0, pause: 1, resume: 1, limit: 1, show: 1, audit: 0 };

function jobIdArg(value: string | undefined, command: string): number {
  const n = value === undefined ? undefined : integerText(value);
  if (n === undefined || n < 1) throw new UsageError(`${command}: expected a job id (an integer >= 1), got ${value === undefined ? 'none' : `"${value}"`}`);
  return n;
}

function queueArg(value: string | undefined, command: string): string {
  if (!value) throw new UsageError(`${command}: expected a queue name`);
  return value;
}

/** --max-in-flight / --max-starts-per-second: a number, null for "none" (remove the limit), undefined when the flag is absent. */
function limitFlag(values: Record<string, unknown>, name: string, integer: boolean): number | null | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  if (raw === 'none') return null;
  const n = integer ? (integerText(String(raw)) ?? NaN) : Number(raw);
  if (String(raw).trim() === '' || !Number.isFinite(n) || n <= 0) {
    throw new UsageError(`--${name}: expected ${integer ? 'an integer >= 1' : 'a number > 0'} or "none", got "${String(raw)}"`);
  }
  return n;
}

const describeJob = (verb: string, r: JobActionResult) => `${verb} job ${r.jobId} (queue ${r.queue}, was ${r.from})\n`;

function describeQueue(c: QueueControl): string {
  const pause = c.paused ? `paused since ${c.pausedAt?.toISOString()} by ${c.pausedBy}: ${c.pausedReason}` : 'running';
  return `${c.queue}\t${pause}\tmax-in-flight=${c.maxInFlight ?? 'none'}\tmax-starts-per-second=${c.maxStartsPerSecond ?? 'none'}\n`;
}

async function run(db: Db, command: string, args: string[], values: Record<string, any>): Promise<string> {
  const actor = () => {
    if (!values.by || !values.reason) throw new UsageError(`${command}: --by WHO and --reason WHY are required (they go to the audit)`);
    return { by: values.by as string, reason: values.reason as string };
  };
  switch (command) {
    case 'cancel':
      return describeJob('cancelled', await cancelJob(db, jobIdArg(args[0], command), actor()));
    case 'retry':
      return describeJob('retried', await retryJob(db, jobIdArg(args[0], command), actor()));
    case 'kill':
    case 'dead-letter':
      return describeJob('dead-lettered', await deadLetterJob(db, jobIdArg(args[0], command), actor()));
    case 'redrive': {
      const queue = queueArg(values.queue, 'redrive --queue');
      const ids = await redriveDeadLetters(db, { queue, code: values.code as DeadLetterCode | undefined, reasonContains: values.matching, limit: intFlag(values, 'limit', 1), allowNew: values.new }, actor());
      return values.json ? JSON.stringify({ redriven: ids }) + '\n' : `redrove ${ids.length} dead letter(s) of ${queue}${ids.length ? `: ${ids.join(' ')}` : ''}\n`;
    }
    case 'pause': {
      const r = await pauseQueue(db, queueArg(args[0], command), { ...actor(), allowNew: values.new });
      return `paused ${args[0]} at ${r.pausedAt.toISOString()}: no worker claims from it until resume\n`;
    }
    case 'resume':
      return `resumed ${args[0]} at ${(await resumeQueue(db, queueArg(args[0], command), actor())).resumedAt.toISOString()}\n`;
    case 'limit': {
      const queue = queueArg(args[0], command);
      const maxInFlight = limitFlag(values, 'max-in-flight', true);
      const maxStartsPerSecond = limitFlag(values, 'max-starts-per-second', false);
      if (maxInFlight === undefined && maxStartsPerSecond === undefined) {
        throw new UsageError('limit: expected --max-in-flight and/or --max-starts-per-second (a number, or "none" to remove it)');
      }
      // A flag left out keeps that limit as it is: setting one never silently removes the other.
      const now = await getQueueControl(db, queue);
      const limits = {
        maxInFlight: maxInFlight === undefined ? (now?.maxInFlight ?? null) : maxInFlight,
        maxStartsPerSecond: maxStartsPerSecond === undefined ? (now?.maxStartsPerSecond ?? null) : maxStartsPerSecond,
      };
      return describeQueue(await setQueueLimits(db, queue, limits, { ...actor(), allowNew: values.new }));
    }
    case 'show': {
      const all = args[0] ? [await getQueueControl(db, args[0])].filter((c): c is QueueControl => c !== null) : await listQueueControls(db);
      if (values.json) return JSON.stringify(all, null, 2) + '\n';
      return all.map(describeQueue).join('') || (args[0] ? `${args[0]}\trunning, no limits\n` : 'no paused or configured queues\n');
    }
    case 'audit': {
      const entries = await listAudit(db, { jobId: intFlag(values, 'job', 1), queue: values.queue, limit: intFlag(values, 'limit', 1) });
      if (values.json) return JSON.stringify(entries, null, 2) + '\n';
      return entries.map((e) => `${e.at.toISOString()}\t${e.actor}\t${e.verb}\t${e.queue}${e.jobId ? `\tjob ${e.jobId}` : ''}\t${e.reason}\n`).join('') || 'no actions recorded\n';
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, FLAGS, true);
  const [command, ...args] = positionals;
  if (values.help || !command) {
    process.stdout.write(USAGE + '\n');
    return values.help ? 0 : 2;
  }
  refuseExtraArguments(command, args, ARGUMENTS);
  const url = databaseUrl();
  const db = new Db({ connectionString: url, maxConnections: 1, applicationName: 'stampede:control' });
  try {
    process.stdout.write(await run(db, command, args, values));
    return 0;
  } finally {
    await db.close();
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  const refused = err instanceof UsageError || err instanceof ValidationError || err instanceof ControlRefusedError;
  // The engine's error names its API option; an operator at the command line passes the flag.
  const message = err instanceof UnknownQueueError ? `${err.verb} ${err.target}: ${unknownQueueReason('--new')}` : (err as Error).message;
  process.stderr.write(redactSecrets(`stampede control: ${message}\n`) + (err instanceof UsageError ? `${USAGE}\n` : ''));
  process.exitCode = refused ? 2 : 1;
}
