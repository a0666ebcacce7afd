import { readFileSync } from 'node:fs';
import { CONTROL_COMMANDS } from '../../bin/control-commands.ts';
import { JOB_VERBS } from '../../engine/control/decide.ts';
import { CATCH_UP_POLICIES, DST_POLICIES } from '../../engine/cron/policy.ts';
import { VERBS as DASHBOARD_VERBS } from '../../engine/dashboard/actions.ts';
import { ENQUEUE_OPTIONS } from '../../engine/enqueue.ts';
import { DECLARATIONS } from '../../engine/options/all.ts';

/**
 * The documented surface the ledger must cover, derived from the code and the
 * README rather than listed by hand, so that a new option, verb or guarantee
 * shows up here without anyone remembering to add it.
 */

/** Options that are seams or wiring, not behaviour a user is promised: the database, the handlers, the clock, the logger... */
const SEAMS = new Set(['db', 'handlers', 'deliver', 'clock', 'rng', 'events', 'log', 'onRescued', 'onPass', 'dbNow', 'workerId', 'nodeId', 'relayId', 'samplerId']);

const behavioural = (component: string, names: readonly string[]) => names.filter((n) => !SEAMS.has(n)).map((n) => `${component}.${n}`);

/**
 * Every option whose effect the documentation promises, as `Component.option`.
 * Component option lists are the declarations' own (engine/options/all.ts;
 * each is tabled in docs/configuration.md, generated from it).
 * Queue limits and the attempt budget per queue are columns, not options of
 * a class: they are set by setQueueLimits and setQueueMaxAttempts (a key's
 * weight, a row of stampede.key_weights, by setKeyWeight).
 */
export function documentedOptions(): string[] {
  return [
    ...DECLARATIONS.flatMap((d) => behavioural(d.component, d.names)),
    'Db.preparedStatements',
    ...behavioural('enqueue', ENQUEUE_OPTIONS),
    'Queue.maxInFlight',
    'Queue.maxStartsPerSecond',
    'Queue.maxInFlightPerKey',
    'Queue.keyWeight',
    'Queue.sequential',
    'Queue.maxAttempts',
    'Schedule.timezone',
    ...DST_POLICIES.map((p) => `Schedule.dstPolicy=${p}`),
    ...CATCH_UP_POLICIES.map((p) => `Schedule.catchUp=${p}`),
  ];
}

/**
 * Every operator verb: the engine's job verbs (JOB_VERBS) and queue verbs
 * (engine/control/queues.ts, the bulk redrive), every action the dashboard
 * serves (its VERBS table), and every `stampede control` command
 * (CONTROL_COMMANDS, as `cli.control.<command>`).
 */
export function documentedVerbs(): string[] {
  return [
    ...Object.keys(JOB_VERBS).map((v) => `control.${v}`),
    'control.redrive',
    'control.pause',
    'control.resume',
    'control.set-limits',
    'control.set-key-weight',
    ...Object.keys(DASHBOARD_VERBS).map((v) => `dashboard.${v}`),
    ...Object.keys(CONTROL_COMMANDS).map((c) => `cli.control.${c}`),
  ];
}

/** One bullet of the README's "Guarantees": its bold lead names it; its text is what a quote must come from. */
export interface Guarantee {
  lead: string;
  text: string;
}

/** The README's guarantees, one per bullet of its "## Guarantees" section. */
export function readmeGuarantees(readme: string): Guarantee[] {
  const section = /^## Guarantees\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1];
  if (!section) throw new Error('README.md has no "## Guarantees" section');
  return section
    .split(/^- /m)
    .slice(1)
    .map((bullet) => {
      const lead = /^\*\*(.+?)\*\*/.exec(bullet)?.[1];
      if (!lead) throw new Error(`a README guarantee does not start with a bold lead: "${bullet.slice(0, 60)}"`);
      return { lead, text: normalise(bullet) };
    });
}

/** Text as a quote is compared: markdown emphasis and code marks dropped, whitespace folded. */
export function normalise(text: string): string {
  return text.replace(/[*`]/g, '').replace(/\s+/g, ' ').trim();
}

export function readDoc(root: string, file: string): string {
  return readFileSync(`${root}/${file}`, 'utf8');
}
