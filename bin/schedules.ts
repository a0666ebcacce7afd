// Manage recurring schedules in the database named by DATABASE_URL.
//
//   stampede schedules add <id> --cron "*/5 * * * *" --queue Q [--tz ZONE] [--payload JSON]
//                                [--priority 0-9] [--max-attempts N] [--dst-policy P] [--catch-up P] [--paused]
//   stampede schedules list [--json]
//   stampede schedules pause|resume|remove <id>
//
// Exit status: 0 done, 2 refused input (the message names the flag, or the field where no flag gave it), 1 anything else.
import { addSchedule, listSchedules, pauseSchedule, removeSchedule, resumeSchedule, type Schedule, type ScheduleInput } from '../engine/cron/schedule.ts';
import { Db } from '../engine/db.ts';
import { ValidationError } from '../engine/errors.ts';
import { databaseUrl, errorText, integerText, namedByFlag, parseFlags, refuseExtraArguments, UsageError } from './cli-args.ts';
import { HELP } from './help.ts';
import { HELP_FLAG, parserOptions, usageText } from './usage.ts';

const USAGE = usageText('schedules', HELP.schedules);

function int(value: string | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  const n = integerText(value);
  if (n === undefined) throw new ValidationError(field, `"${value}" is not an integer`);
  return n;
}

function describe(s: Schedule): string {
  const state = s.enabled ? 'enabled' : 'paused';
  return `${s.id}\t${s.cron}\t${s.timezone}\tqueue=${s.queue}\tdst=${s.dstPolicy}\tcatch-up=${s.catchUp}\t${state}\tmaterialized-until=${s.lastMaterializedUntil.toISOString()}`;
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    parserOptions({ ...HELP.schedules.flags, ...HELP_FLAG }),
    true,
  );
  const [command, id] = positionals;
  if (values.help || !command) {
    process.stdout.write(USAGE + '\n');
    return values.help ? 0 : 2;
  }
  refuseExtraArguments(command, positionals.slice(1), { add: 1, list: 0, pause: 1, resume: 1, remove: 1 });
  const url = databaseUrl();
  const needId = () => {
    if (!id) throw new ValidationError('id', `${command}: expected a schedule id, got ${id === undefined ? 'none' : '""'}`);
    return id;
  };
  const db = new Db({ connectionString: url, maxConnections: 1, applicationName: 'stampede:schedules' });
  try {
    switch (command) {
      case 'add': {
        let payload: unknown;
        if (values.payload !== undefined) {
          try {
            payload = JSON.parse(values.payload);
          } catch {
            throw new ValidationError('payload', `${values.payload} is not JSON; expected a JSON object`);
          }
        }
        const input: ScheduleInput = {
          id: needId(),
          cron: values.cron as string,
          queue: values.queue as string,
          timezone: values.tz,
          payload: payload as Record<string, unknown> | undefined,
          priority: int(values.priority, 'priority'),
          maxAttempts: int(values['max-attempts'], 'maxAttempts'),
          dstPolicy: values['dst-policy'] as ScheduleInput['dstPolicy'],
          catchUp: values['catch-up'] as ScheduleInput['catchUp'],
          enabled: !values.paused,
        };
        // Drop the flags not given, so the defaults apply.
        for (const k of Object.keys(input) as (keyof ScheduleInput)[]) if (input[k] === undefined) delete input[k];
        process.stdout.write(`added ${describe(await addSchedule(db, input))}\n`);
        return 0;
      }
      case 'list': {
        const all = await listSchedules(db);
        process.stdout.write(values.json ? JSON.stringify(all, null, 2) + '\n' : all.map((s) => describe(s) + '\n').join('') || 'no schedules\n');
        return 0;
      }
      case 'pause':
        process.stdout.write(`paused ${describe(await pauseSchedule(db, needId()))}\n`);
        return 0;
      case 'resume':
        process.stdout.write(`resumed ${describe(await resumeSchedule(db, needId()))}\n`);
        return 0;
      case 'remove':
        process.stdout.write(`removed ${(await removeSchedule(db, needId())).id}\n`);
        return 0;
      default:
        process.stderr.write(`schedules: unknown command "${command}"\n${USAGE}\n`);
        return 2;
    }
  } finally {
    await db.close();
  }
}

/** The flag behind each field of a ScheduleInput the engine may refuse: the message names what the user typed. */
const FLAG_OF_FIELD: Record<string, string> = {
  cron: '--cron',
  queue: '--queue',
  timezone: '--tz',
  payload: '--payload',
  priority: '--priority',
  maxAttempts: '--max-attempts',
  dstPolicy: '--dst-policy',
  catchUp: '--catch-up',
};

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (thrown) {
  const err = namedByFlag(thrown, FLAG_OF_FIELD);
  process.stderr.write(`stampede schedules: ${errorText(err)}\n`);
  process.exitCode = err instanceof ValidationError || err instanceof UsageError ? 2 : 1;
}
