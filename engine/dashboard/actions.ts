import type { Queryable } from '../db.ts';
import { pauseSchedule, resumeSchedule, validateScheduleId } from '../cron/schedule.ts';
import { redrive } from '../dead-letters.ts';
import { ValidationError } from '../errors.ts';
import { html, type Html } from './html.ts';
import type { DeadLetterGroup, JobView } from './queries.ts';
import { actionButton, type PageContext } from './pages/layout.ts';

/** Who asked for a change and why: the confirmation page asks for both. */
export interface Actor {
  by: string;
  reason: string;
}

/**
 * A control verb the dashboard offers. `parse` reads and validates its
 * fields from the form (a ValidationError names the bad one), `describe`
 * is the sentence the confirmation page shows, `run` does it and returns
 * the outcome the next page reports.
 */
export interface DashboardVerb<A> {
  label: string;
  parse(form: URLSearchParams): A;
  describe(args: A): string;
  run(db: Queryable, args: A, actor: Actor): Promise<string>;
}

function field(form: URLSearchParams, name: string): string {
  const v = form.get(name);
  if (v === null || v.trim() === '') throw new ValidationError(name, 'is missing');
  return v.trim();
}

function jobIdField(form: URLSearchParams): number {
  const raw = field(form, 'jobId');
  const id = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(id) || id < 1) throw new ValidationError('jobId', `"${raw}" is not a job id; expected a positive integer`);
  return id;
}

export const VERBS: Record<string, DashboardVerb<any>> = {
  redrive: {
    label: 'Redrive',
    parse: (form) => ({ jobId: jobIdField(form) }),
    describe: (a: { jobId: number }) => `Move dead job ${a.jobId} back to pending with a fresh attempt budget (its error history stays).`,
    async run(db, a: { jobId: number }) {
      if (!(await redrive(db, a.jobId))) throw new ValidationError('jobId', `job ${a.jobId} is not dead (already redriven, or never dead); nothing changed`);
      return `Job ${a.jobId} redriven: pending, due now.`;
    },
  } satisfies DashboardVerb<{ jobId: number }>,
  'pause-schedule': {
    label: 'Pause schedule',
    parse: (form) => ({ id: validateScheduleId(field(form, 'id')) }),
    describe: (a: { id: string }) => `Stop materializing schedule ${a.id}. Occurrences already written still run.`,
    async run(db, a: { id: string }) {
      await pauseSchedule(db, a.id);
      return `Schedule ${a.id} paused.`;
    },
  } satisfies DashboardVerb<{ id: string }>,
  'resume-schedule': {
    label: 'Resume schedule',
    parse: (form) => ({ id: validateScheduleId(field(form, 'id')) }),
    describe: (a: { id: string }) => `Start materializing schedule ${a.id} again from now; what fell due while it was paused is skipped.`,
    async run(db, a: { id: string }) {
      await resumeSchedule(db, a.id);
      return `Schedule ${a.id} resumed.`;
    },
  } satisfies DashboardVerb<{ id: string }>,
};

/** The buttons of a job's page: the verbs that make sense in its state. */
export function jobActionButtons(ctx: PageContext, job: JobView): Html {
  if (job.archived) return html``;
  const buttons: Html[] = [];
  if (job.state === 'dead') buttons.push(actionButton(ctx, 'redrive', { jobId: job.id }, VERBS.redrive.label));
  return html`${buttons}`;
}

/** A bulk redrive of one queue's dead letters of one reason: needs the engine's bulk verb (issue 17, branch ops). */
export function bulkRedriveButton(_ctx: PageContext, _group: DeadLetterGroup): Html {
  return html``;
}
