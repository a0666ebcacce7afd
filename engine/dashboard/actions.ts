import type { Db } from '../db.ts';
import {
  cancelJob,
  deadLetterJob,
  pauseQueue,
  redriveDeadLetters,
  resumeQueue,
  retryJob,
  setQueueLimits,
  verbApplies,
  type Actor,
  type QueueControl,
} from '../control/index.ts';
import { pauseSchedule, resumeSchedule, validateScheduleId } from '../cron/schedule.ts';
import { ValidationError } from '../errors.ts';
import type { JobState } from '../job.ts';
import { DEAD_LETTER_CODES, type DeadLetterCode } from '../dead-letters.ts';
import { validateOneOf, validateQueueName } from '../validate.ts';
import { html, type Html } from './html.ts';
import type { DeadLetterGroup, JobView } from './queries.ts';
import { actionButton, type PageContext } from './pages/layout.ts';

/**
 * A control verb the dashboard offers. `parse` reads and validates its
 * fields from the form (a ValidationError names the bad one), `describe`
 * is the sentence the confirmation page shows, `run` does it, with who and
 * why, and returns the outcome the next page reports. Every verb is one of
 * the engine's (engine/control, engine/cron): the dashboard adds no
 * behaviour of its own, so a refusal here is the engine's refusal.
 */
export interface DashboardVerb<A> {
  label: string;
  parse(form: URLSearchParams): A;
  describe(args: A): string;
  run(db: Db, args: A, actor: Actor): Promise<string>;
  /** Fields the operator edits on the confirmation page (prefilled from the button's), besides who and why. */
  inputs?: VerbInput[];
}

export interface VerbInput {
  name: string;
  label: string;
  /** What an empty value means, shown beside the field. */
  hint: string;
}

function field(form: URLSearchParams, name: string): string {
  const v = form.get(name);
  if (v === null || v.trim() === '') throw new ValidationError(name, 'is missing');
  return v.trim();
}

function jobIdField(form: URLSearchParams): { jobId: number } {
  const raw = field(form, 'jobId');
  const id = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(id) || id < 1) throw new ValidationError('jobId', `"${raw}" is not a job id; expected a positive integer`);
  return { jobId: id };
}

const queueField = (form: URLSearchParams) => ({ queue: validateQueueName(field(form, 'queue')) });
const scheduleField = (form: URLSearchParams) => ({ id: validateScheduleId(field(form, 'id')) });

type JobArgs = { jobId: number };
type QueueArgs = { queue: string };
type ScheduleArgs = { id: string };
type BulkArgs = { queue: string; code: DeadLetterCode | null; reasonContains: string | null };

/** An optional number field: empty means null (no limit). */
function optionalNumber(form: URLSearchParams, name: string, check: (n: number) => boolean, expected: string): number | null {
  const raw = form.get(name)?.trim() ?? '';
  if (raw === '') return null;
  const n = Number(raw);
  if (!Number.isFinite(n) || !check(n)) throw new ValidationError(name, `"${raw}" is not ${expected}; leave it empty for no limit`);
  return n;
}

type LimitArgs = { queue: string; maxInFlight: number | null; maxStartsPerSecond: number | null };

function describeLimits(a: Pick<LimitArgs, 'maxInFlight' | 'maxStartsPerSecond'>): string {
  const parts = [a.maxInFlight === null ? null : `at most ${a.maxInFlight} in flight`, a.maxStartsPerSecond === null ? null : `at most ${a.maxStartsPerSecond} starts/s`];
  return parts.filter((p) => p !== null).join(' and ') || 'no limit';
}

/** Most dead letters one bulk redrive moves (the engine's default per call); the rest stay for the next. */
const BULK_REDRIVE_LIMIT = 10_000;

const cancel: DashboardVerb<JobArgs> = {
  label: 'Cancel',
  parse: jobIdField,
  describe: (a) => `Cancel job ${a.jobId}: it ends as cancelled and never runs again. If a worker holds it, its handler is aborted at its next heartbeat and its result refused.`,
  run: async (db, a, who) => `Job ${a.jobId} cancelled (it was ${(await cancelJob(db, a.jobId, who)).from}).`,
};

const retry: DashboardVerb<JobArgs> = {
  label: 'Retry now',
  parse: jobIdField,
  describe: (a) => `Run job ${a.jobId} now: a failed job becomes due at once with its attempt budget unchanged; a dead job is redriven with a fresh budget.`,
  run: async (db, a, who) => `Job ${a.jobId} is due now (it was ${(await retryJob(db, a.jobId, who)).from}).`,
};

const deadLetter: DashboardVerb<JobArgs> = {
  label: 'Dead-letter',
  parse: jobIdField,
  describe: (a) => `Dead-letter job ${a.jobId} by hand: no worker runs it again until it is redriven. If a worker holds it, the worker learns at its next heartbeat.`,
  run: async (db, a, who) => `Job ${a.jobId} dead-lettered (it was ${(await deadLetterJob(db, a.jobId, who)).from}).`,
};

export const VERBS: Record<string, DashboardVerb<any>> = {
  cancel,
  retry,
  'dead-letter': deadLetter,
  // A dead letter's Redrive is retry of a dead job: the same engine call, audited alike.
  redrive: {
    ...retry,
    label: 'Redrive',
    describe: (a: JobArgs) => `Move dead job ${a.jobId} back to pending with a fresh attempt budget (its error history stays).`,
    run: async (db: Db, a: JobArgs, who: Actor) => `Job ${a.jobId} redriven: pending, due now (it was ${(await retryJob(db, a.jobId, who)).from}).`,
  },
  'redrive-bulk': {
    label: 'Redrive all',
    parse: (form) => ({
      ...queueField(form),
      code: form.get('code') ? validateOneOf(form.get('code'), 'code', DEAD_LETTER_CODES) : null,
      reasonContains: form.get('reasonContains') || null,
    }),
    describe: (a) =>
      `Redrive the dead letters of queue ${a.queue}${a.code === null ? '' : ` of code ${a.code}`}${a.reasonContains === null ? '' : ` whose reason contains "${a.reasonContains}"`}, oldest first, at most ${BULK_REDRIVE_LIMIT} in this go, each with a fresh attempt budget.`,
    async run(db, a, who) {
      const ids = await redriveDeadLetters(db, { queue: a.queue, code: a.code ?? undefined, reasonContains: a.reasonContains ?? undefined, limit: BULK_REDRIVE_LIMIT }, who);
      return `${ids.length} dead letter${ids.length === 1 ? '' : 's'} of ${a.queue} redriven${ids.length === BULK_REDRIVE_LIMIT ? ' (the limit of one go: more may remain)' : ''}.`;
    },
  } satisfies DashboardVerb<BulkArgs>,
  'pause-queue': {
    label: 'Pause queue',
    parse: queueField,
    describe: (a) => `Pause queue ${a.queue}: no worker claims from it until it is resumed. Jobs in flight finish; enqueues go on; depth and age keep being shown.`,
    run: async (db, a, who) => `Queue ${a.queue} paused at ${(await pauseQueue(db, a.queue, who)).pausedAt.toISOString()}.`,
  } satisfies DashboardVerb<QueueArgs>,
  'resume-queue': {
    label: 'Resume queue',
    parse: queueField,
    describe: (a) => `Resume queue ${a.queue}: workers claim from it again at once.`,
    run: async (db, a, who) => `Queue ${a.queue} resumed at ${(await resumeQueue(db, a.queue, who)).resumedAt.toISOString()}.`,
  } satisfies DashboardVerb<QueueArgs>,
  'set-limits': {
    label: 'Set limits',
    parse: (form) => ({
      ...queueField(form),
      maxInFlight: optionalNumber(form, 'maxInFlight', (n) => Number.isInteger(n) && n >= 1, 'a whole number of jobs >= 1'),
      maxStartsPerSecond: optionalNumber(form, 'maxStartsPerSecond', (n) => n > 0, 'a number of starts per second > 0'),
    }),
    describe: (a) =>
      `Set the global limits of queue ${a.queue}, enforced by the claim across every worker (now: ${describeLimits(a)}). They apply from the next claim; jobs in flight above a lowered limit finish.`,
    inputs: [
      { name: 'maxInFlight', label: 'max in flight', hint: 'jobs claimed at once, all workers; empty: no limit' },
      { name: 'maxStartsPerSecond', label: 'max starts per second', hint: 'all workers; empty: no limit' },
    ],
    async run(db, a, who) {
      const c = await setQueueLimits(db, a.queue, { maxInFlight: a.maxInFlight, maxStartsPerSecond: a.maxStartsPerSecond }, who);
      return `Queue ${a.queue}: ${describeLimits(c)}.`;
    },
  } satisfies DashboardVerb<LimitArgs>,
  // Schedules predate the audit table: pausing one is logged by the dashboard, not audited in the database.
  'pause-schedule': {
    label: 'Pause schedule',
    parse: scheduleField,
    describe: (a) => `Stop materializing schedule ${a.id}. Occurrences already written still run.`,
    run: async (db, a) => `Schedule ${(await pauseSchedule(db, a.id)).id} paused.`,
  } satisfies DashboardVerb<ScheduleArgs>,
  'resume-schedule': {
    label: 'Resume schedule',
    parse: scheduleField,
    describe: (a) => `Start materializing schedule ${a.id} again from now; what fell due while it was paused is skipped.`,
    run: async (db, a) => `Schedule ${(await resumeSchedule(db, a.id)).id} resumed.`,
  } satisfies DashboardVerb<ScheduleArgs>,
};

/** The buttons of a job's page: the verbs the engine accepts in its state (engine/control/decide.ts). */
export function jobActionButtons(ctx: PageContext, job: JobView): Html {
  if (job.archived) return html`<span class="muted">archived: nothing to change</span>`;
  const state = job.state as JobState;
  const buttons: Html[] = [];
  if (verbApplies('retry', state)) buttons.push(actionButton(ctx, 'retry', { jobId: job.id }, state === 'dead' ? 'Redrive (retry now)' : 'Retry now'));
  if (verbApplies('cancel', state)) buttons.push(actionButton(ctx, 'cancel', { jobId: job.id }, cancel.label));
  if (verbApplies('dead-letter', state)) buttons.push(actionButton(ctx, 'dead-letter', { jobId: job.id }, deadLetter.label));
  return html`${buttons}`;
}

/** Redrive one queue's dead letters of one code and reason, in bulk. */
export function bulkRedriveButton(ctx: PageContext, group: DeadLetterGroup): Html {
  return actionButton(ctx, 'redrive-bulk', { queue: group.queue, code: group.code, reasonContains: group.reason }, `Redrive these ${group.jobs}`);
}

/** Opens the limits form, prefilled with the queue's current limits. */
export function queueLimitsButton(ctx: PageContext, queue: string, c: QueueControl | undefined): Html {
  return actionButton(ctx, 'set-limits', { queue, maxInFlight: c?.maxInFlight ?? '', maxStartsPerSecond: c?.maxStartsPerSecond ?? '' }, 'Limits…');
}

/** Pause or resume, whichever applies. */
export function queuePauseButton(ctx: PageContext, queue: string, paused: boolean): Html {
  return paused ? actionButton(ctx, 'resume-queue', { queue }, 'Resume') : actionButton(ctx, 'pause-queue', { queue }, 'Pause');
}
