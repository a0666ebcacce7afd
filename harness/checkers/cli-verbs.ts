import type { EventOf, FinalState, HistoryEvent, InvariantResult } from '../history.ts';
import { eventsOf } from '../history.ts';
import { changedAnyway, operatorActions, type OperatorAction } from './operator-actions.ts';
import { firstN, fmt, type CheckerDef } from './types.ts';

export type CliVerbsBounds = Record<string, never>;

/** The value of `--flag V` in a command line, or undefined. */
function flagValue(command: readonly string[], flag: string): string | undefined {
  const i = command.indexOf(flag);
  return i >= 0 ? command[i + 1] : undefined;
}

/**
 * Why a `stampede control` call that exited 0 did not do what its verb says, by its targets' states read right
 * after it returned (operator:action `after`) and what it printed; undefined when it did.
 */
function notDone(a: OperatorAction, claimedAfter: (jobId: number) => boolean): string | undefined {
  const jobState = (want: string) => a.jobIds.find((id) => a.after[id] !== want);
  const printed = a.answer;
  switch (a.verb) {
    case 'cancel':
    case 'dead-letter': {
      const want = a.verb === 'cancel' ? 'cancelled' : 'dead';
      const off = jobState(want);
      if (off !== undefined) return `job ${off} is ${a.after[off]} after ${a.verb}, expected ${want}`;
      break;
    }
    case 'retry': {
      // A dead job retried is due again: it leaves the dead letters and is claimed again, which nothing else would do.
      const off = a.jobIds.find((id) => a.before[id] === 'dead' && (a.after[id] === 'dead' || !claimedAfter(id)));
      if (off !== undefined) return `dead job ${off} retried but ${a.after[off] === 'dead' ? 'still dead' : 'never claimed again'}`;
      break;
    }
    case 'redrive': {
      const off = a.jobIds.find((id) => a.before[id] !== 'dead' || a.after[id] === 'dead');
      if (off !== undefined) return `job ${off} listed as redriven, ${a.before[off]} before and ${a.after[off]} after`;
      const n = /redrove (\d+) dead letter/.exec(printed)?.[1];
      if (n === undefined || Number(n) !== a.jobIds.length) return `printed "${printed}", but ${a.jobIds.length} dead letters left the dead-letter state`;
      return undefined;
    }
    case 'pause':
    case 'resume': {
      const want = a.verb === 'pause' ? 'paused' : 'running';
      const state = a.queue === undefined ? undefined : a.after[a.queue];
      if (!state?.startsWith(want)) return `queue ${a.queue} is "${state}" after ${a.verb}, expected ${want}`;
      break;
    }
    case 'set-limits': {
      const state = a.queue === undefined ? '' : (a.after[a.queue] ?? '');
      for (const [flag, field] of [['--max-in-flight', 'maxInFlight'], ['--max-starts-per-second', 'maxStartsPerSecond']] as const) {
        const asked = flagValue(a.command ?? [], flag);
        if (asked !== undefined && !state.split(' ').includes(`${field}=${asked}`)) return `queue ${a.queue} is "${state}" after limit ${flag} ${asked}`;
      }
      break;
    }
  }
  // What it printed names what it acted on: the job, or the queue.
  const named = a.jobIds.length ? a.jobIds.find((id) => !printed.includes(`job ${id}`)) : undefined;
  if (named !== undefined) return `printed "${printed}", which does not name job ${named}`;
  if (!a.jobIds.length && a.queue !== undefined && !printed.includes(a.queue)) return `printed "${printed}", which does not name queue ${a.queue}`;
  return undefined;
}

/**
 * Why a read at the command line right after a change there (`show <queue>`, `audit --queue <queue>`) does not show
 * it; undefined when it does. `show` prints the queue's line with each global limit as the database held it right
 * after the change; `audit` lists the change, by its actor, verb and queue.
 */
function notShown(r: EventOf<'control:read'>): string | undefined {
  if (r.exitCode !== 0) return `exited ${r.exitCode}: ${r.output}`;
  if (r.command[0] === 'show') {
    const line = r.output.split('\n').find((l) => l.startsWith(`${r.queue}\t`));
    if (!line) return `printed no line for queue ${r.queue}`;
    for (const [field, flag] of [['maxInFlight', 'max-in-flight'], ['maxStartsPerSecond', 'max-starts-per-second']] as const) {
      const held = new RegExp(`${field}=(\\S+)`).exec(r.state)?.[1];
      if (held !== undefined && !line.split('\t').includes(`${flag}=${held}`)) return `printed "${line}", but the queue held ${field}=${held}`;
    }
    return undefined;
  }
  if (!r.output.split('\n').some((l) => l.includes(`\t${r.by}\t${r.verb}\t${r.queue}`))) return `lists no ${r.verb} of ${r.queue} by ${r.by}`;
  return undefined;
}

/**
 * `stampede control` (bin/control.ts), run as its own process by the harness
 * the way an operator's shell runs it, does what its verb says or refuses
 * without changing anything: exit 0 and the verb's effect on its targets,
 * read right after it returned (a cancelled job is cancelled, a dead-lettered
 * one dead, a retried dead job claimed again, a redrive moves the dead letters
 * it counts, a paused queue paused, a resumed one running, a limit the one
 * asked for), with what it printed naming the job or the queue; or exit 2
 * with a `stampede control:` message naming the target, and nothing of it
 * changed. Any other exit status is a failure. A change made there is read
 * back there (`control:read`): `show` must print what the database holds,
 * `audit` must list the change. Judged over the calls made via cli and those
 * reads; unknown with no call.
 */
export function checkCliVerbs(history: readonly HistoryEvent[], _final: FinalState): InvariantResult {
  const calls = operatorActions(history).filter(({ a }) => a.via === 'cli');
  const claims = new Map<number, { i: number; dbTime?: number }[]>();
  history.forEach((e, i) => {
    if (e.type === 'job:claimed') (claims.get(e.jobId) ?? claims.set(e.jobId, []).get(e.jobId)!).push({ i, dbTime: e.dbTime });
  });
  const bad: Record<string, unknown>[] = [];
  const counts = { done: 0, refused: 0 };
  for (const { a, i } of calls) {
    const where = { verb: a.verb, command: (a.command ?? []).join(' '), exitCode: a.exitCode ?? null };
    if (a.exitCode === 0 && a.outcome === 'ok') {
      counts.done++;
      // Claimed after the call: recorded after it, or made on the database's clock once it was sent.
      const why = notDone(a, (id) => (claims.get(id) ?? []).some((c) => c.i > i || (c.dbTime !== undefined && c.dbTime >= a.dbBefore)));
      if (why) bad.push({ ...where, notDone: why });
      continue;
    }
    if (a.exitCode !== 2) {
      bad.push({ ...where, answer: a.answer, expected: 'exit 0 (done) or 2 (refused)' });
      continue;
    }
    counts.refused++;
    const target = a.jobIds.length ? a.jobIds.map((id) => String(id)) : a.queue !== undefined ? [a.queue] : [];
    if (!a.answer.startsWith('stampede control:') || !target.every((t) => a.answer.includes(t))) bad.push({ ...where, refusal: a.answer, expected: `a stampede control: message naming ${target.join(', ')}` });
    for (const { change, ...t } of changedAnyway(a)) bad.push({ ...where, ...t, refusedButChanged: change });
  }
  const reads = eventsOf(history, 'control:read');
  for (const r of reads) {
    const why = notShown(r);
    if (why) bad.push({ read: r.command.join(' '), after: `${r.verb} of ${r.queue}`, notShown: why });
  }
  const base = {
    name: 'cli-verbs',
    bound: 'exit 0 with the verb done and its target named, or exit 2 naming the target with nothing changed; show and audit show the change',
    judged: { n: calls.length + reads.length, what: 'stampede control calls and the reads after them' },
  };
  if (!calls.length) return { ...base, pass: 'unknown', figure: 'no verb was called through stampede control: nothing to judge' };
  const figure = `${fmt(bad.length)} wrong of ${fmt(calls.length)} stampede control calls (${fmt(counts.done)} done, exit 0; ${fmt(counts.refused)} refused, exit 2) and ${fmt(reads.length)} reads after them`;
  if (bad.length) return { ...base, pass: false, figure, examples: firstN(bad) };
  return { ...base, pass: true, figure };
}

export const cliVerbs: CheckerDef<CliVerbsBounds> = {
  name: 'cli-verbs',
  says: 'stampede control does what its verb says and exits 0, or exits 2 naming the target and changes nothing',
  check: checkCliVerbs,
  bounds: {},
  defaults: {},
};
