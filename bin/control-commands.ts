/**
 * The `stampede control` commands: how many arguments each takes after its
 * name (show: at most one queue), and what it does. bin/control.ts runs them;
 * the promise ledger reads this table (harness/promises/documented.ts), so a
 * new command cannot ship without a promise that covers it.
 */
import type { Db } from '../engine/db.ts';
import type { DeadLetterCode } from '../engine/dead-letters.ts';
import {
  cancelJob,
  deadLetterJob,
  getQueueControl,
  listAudit,
  listKeyWeights,
  listQueueControls,
  pauseQueue,
  redriveDeadLetters,
  resumeQueue,
  retryJob,
  setKeyWeight,
  setQueueLimits,
  type Actor,
  type JobActionResult,
  type KeyWeight,
  type QueueControl,
  type QueueLimits,
} from '../engine/control/index.ts';
import { integerText, intFlag, UsageError } from './cli-args.ts';

/** A command's parsed flags (bin/help.ts declares them). */
type Values = Record<string, any>;

export interface ControlCommandDef {
  /** How many arguments it takes after its name. */
  args: number;
  /** Runs it; resolves with what it prints. `actor` reads --by and --reason, refusing the command without them. */
  run: (db: Db, args: string[], values: Values, actor: () => Actor) => Promise<string>;
}

function jobIdArg(value: string | undefined, command: string): number {
  const n = value === undefined ? undefined : integerText(value);
  if (n === undefined || n < 1) throw new UsageError(`${command}: expected a job id (an integer >= 1), got ${value === undefined ? 'none' : `"${value}"`}`);
  return n;
}

function queueArg(value: string | undefined, command: string): string {
  if (!value) throw new UsageError(`${command}: expected a queue name`);
  return value;
}

/** --max-in-flight / --max-starts-per-second / --max-in-flight-per-key: a number, null for "none" (remove the limit), undefined when the flag is absent. */
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

/** --sequential on|off; undefined when absent. */
function sequentialFlag(raw: unknown): boolean | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'on' || raw === 'off') return raw === 'on';
  throw new UsageError(`--sequential: expected on or off, got "${String(raw)}"`);
}

/** key-weight's third argument: an integer in [1, 1000], or "none" (the key weighs 1 again). */
function weightArg(value: string | undefined): number | null {
  if (value === 'none') return null;
  const n = value === undefined ? undefined : integerText(value);
  if (n === undefined || n < 1 || n > 1000) {
    throw new UsageError(`key-weight: expected a weight (an integer in [1, 1000]) or "none", got ${value === undefined ? 'none given' : `"${value}"`}`);
  }
  return n;
}

/** The limits `limit` sets: a flag left out keeps that setting as it is, so setting one never silently removes another. */
async function limitsFromFlags(db: Db, queue: string, values: Record<string, unknown>): Promise<QueueLimits> {
  const maxInFlight = limitFlag(values, 'max-in-flight', true);
  const maxStartsPerSecond = limitFlag(values, 'max-starts-per-second', false);
  const maxInFlightPerKey = limitFlag(values, 'max-in-flight-per-key', true);
  const sequential = sequentialFlag(values.sequential);
  if ([maxInFlight, maxStartsPerSecond, maxInFlightPerKey, sequential].every((v) => v === undefined)) {
    throw new UsageError(
      'limit: expected --max-in-flight, --max-starts-per-second, --max-in-flight-per-key (each a number, or "none" to remove it) and/or --sequential on|off',
    );
  }
  // The engine replaces both global limits at once (the per-key ones only when given).
  const now = maxInFlight === undefined || maxStartsPerSecond === undefined ? await getQueueControl(db, queue) : null;
  return {
    maxInFlight: maxInFlight === undefined ? (now?.maxInFlight ?? null) : maxInFlight,
    maxStartsPerSecond: maxStartsPerSecond === undefined ? (now?.maxStartsPerSecond ?? null) : maxStartsPerSecond,
    ...(maxInFlightPerKey === undefined ? {} : { maxInFlightPerKey }),
    ...(sequential === undefined ? {} : { sequential }),
  };
}

const describeJob = (verb: string, r: JobActionResult) => `${verb} job ${r.jobId} (queue ${r.queue}, was ${r.from})\n`;

function describeQueue(c: QueueControl): string {
  const pause = c.paused ? `paused since ${c.pausedAt?.toISOString()} by ${c.pausedBy}: ${c.pausedReason}` : 'running';
  const perKey = `max-in-flight-per-key=${c.maxInFlightPerKey ?? 'none'}\tsequential=${c.sequential ? 'on' : 'off'}`;
  return `${c.queue}\t${pause}\tmax-in-flight=${c.maxInFlight ?? 'none'}\tmax-starts-per-second=${c.maxStartsPerSecond ?? 'none'}\t${perKey}\n`;
}

const describeWeights = (weights: KeyWeight[]) => weights.map((w) => `\tkey ${w.key}\tweight=${w.weight}\n`).join('');

/** A queue whose claims walk its keys: only there does a key's weight count. */
const isFair = (c: QueueControl | null) => c !== null && (c.maxInFlightPerKey !== null || c.sequential);

const jobVerb =
  (verb: string, act: (db: Db, id: number, actor: Actor) => Promise<JobActionResult>, command: string): ControlCommandDef['run'] =>
  async (db, args, _values, actor) =>
    describeJob(verb, await act(db, jobIdArg(args[0], command), actor()));

export const CONTROL_COMMANDS = {
  cancel: { args: 1, run: jobVerb('cancelled', cancelJob, 'cancel') },
  retry: { args: 1, run: jobVerb('retried', retryJob, 'retry') },
  kill: { args: 1, run: jobVerb('dead-lettered', deadLetterJob, 'kill') },
  'dead-letter': { args: 1, run: jobVerb('dead-lettered', deadLetterJob, 'dead-letter') },
  redrive: {
    args: 0,
    run: async (db, _args, values, actor) => {
      const queue = queueArg(values.queue, 'redrive --queue');
      const ids = await redriveDeadLetters(
        db,
        { queue, code: values.code as DeadLetterCode | undefined, reasonContains: values.matching, limit: intFlag(values, 'limit', 1), allowNew: values.new },
        actor(),
      );
      return values.json ? JSON.stringify({ redriven: ids }) + '\n' : `redrove ${ids.length} dead letter(s) of ${queue}${ids.length ? `: ${ids.join(' ')}` : ''}\n`;
    },
  },
  pause: {
    args: 1,
    run: async (db, args, values, actor) => {
      const r = await pauseQueue(db, queueArg(args[0], 'pause'), { ...actor(), allowNew: values.new });
      return `paused ${args[0]} at ${r.pausedAt.toISOString()}: no worker claims from it until resume\n`;
    },
  },
  resume: {
    args: 1,
    run: async (db, args, _values, actor) => `resumed ${args[0]} at ${(await resumeQueue(db, queueArg(args[0], 'resume'), actor())).resumedAt.toISOString()}\n`,
  },
  limit: {
    args: 1,
    run: async (db, args, values, actor) => {
      const queue = queueArg(args[0], 'limit');
      return describeQueue(await setQueueLimits(db, queue, await limitsFromFlags(db, queue, values), { ...actor(), allowNew: values.new }));
    },
  },
  'key-weight': {
    args: 3,
    run: async (db, args, values, actor) => {
      const [queue, key] = [queueArg(args[0], 'key-weight'), args[1]];
      if (!key) throw new UsageError('key-weight: expected <queue> <key> <weight|none>');
      const weight = weightArg(args[2]);
      await setKeyWeight(db, queue, key, weight, { ...actor(), allowNew: values.new });
      const note = isFair(await getQueueControl(db, queue)) ? '' : ` (no effect until ${queue} has --max-in-flight-per-key or --sequential on)`;
      return `${queue}\tkey ${key}\tweight=${weight ?? '1 (none set)'}${note}\n`;
    },
  },
  show: {
    args: 1,
    run: async (db, args, values) => {
      const all = args[0] ? [await getQueueControl(db, args[0])].filter((c): c is QueueControl => c !== null) : await listQueueControls(db);
      // Each shown queue with its weighed keys; a queue with weights but no other setting is shown by name.
      const shown = await Promise.all(all.map(async (c) => ({ ...c, keyWeights: await listKeyWeights(db, c.queue) })));
      const orphanWeights = args[0] && all.length === 0 ? await listKeyWeights(db, args[0]) : [];
      if (values.json) return JSON.stringify(shown, null, 2) + '\n';
      const text = shown.map((c) => describeQueue(c) + describeWeights(c.keyWeights)).join('');
      return text || (args[0] ? `${args[0]}\trunning, no limits\n${describeWeights(orphanWeights)}` : 'no paused or configured queues\n');
    },
  },
  audit: {
    args: 0,
    run: async (db, _args, values) => {
      const entries = await listAudit(db, { jobId: intFlag(values, 'job', 1), queue: values.queue, limit: intFlag(values, 'limit', 1) });
      if (values.json) return JSON.stringify(entries, null, 2) + '\n';
      return entries.map((e) => `${e.at.toISOString()}\t${e.actor}\t${e.verb}\t${e.queue}${e.jobId ? `\tjob ${e.jobId}` : ''}\t${e.reason}\n`).join('') || 'no actions recorded\n';
    },
  },
} satisfies Record<string, ControlCommandDef>;

export type ControlCommand = keyof typeof CONTROL_COMMANDS;
