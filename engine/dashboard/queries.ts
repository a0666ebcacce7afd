import type { Queryable } from '../db.ts';
import { ValidationError } from '../errors.ts';
import type { AuditEntry } from '../control/index.ts';
import type { DeadLetterCode } from '../dead-letters.ts';
import { jobFromRow, type Job } from '../job.ts';
import { loadQueries } from '../sql.ts';
import { validateInt, validateKey, validateQueueName } from '../validate.ts';

const QUERY_NAMES = [
  'JobById',
  'JobByIdempotencyKey',
  'SearchClaimable',
  'SearchClaimed',
  'SearchDead',
  'SearchCancelled',
  'SearchRecentDone',
  'SearchArchived',
  'DeadLetterOfJob',
  'DeadLetterReasons',
  'RecentAudit',
  'LargestKeys',
] as const;
export const dashboardQueries = loadQueries(new URL('./dashboard.sql', import.meta.url), QUERY_NAMES);
const q = dashboardQueries;

/**
 * A job as the dashboard shows it: the engine's Job (engine/job.ts) less its
 * lease token (a secret of the worker holding it), plus its history. An
 * archived row has no lease.
 */
export interface JobView extends Omit<Job, 'leaseToken' | 'state'> {
  /** A JobState; text, so a state added by a later migration still shows. */
  state: string;
  errors: { attempt?: number; at?: string; kind?: string; error?: string }[];
  updatedAt: Date;
  finishedAt: Date | null;
  /** True when the row was read from stampede.job_history. */
  archived: boolean;
}

function jobViewFromRow(r: any): JobView {
  const { leaseToken: _secret, ...job } = jobFromRow(r);
  return { ...job, errors: Array.isArray(r.errors) ? r.errors : [], updatedAt: r.updated_at, finishedAt: r.finished_at, archived: r.archived };
}

/** The states a search can ask for. */
export const SEARCH_STATES = ['pending', 'failed', 'claimed', 'dead', 'cancelled', 'done'] as const;
export type SearchState = (typeof SEARCH_STATES)[number];

export interface JobSearch {
  id?: number;
  idempotencyKey?: string;
  queue?: string;
  /** Default: every state. */
  state?: SearchState;
  /** Rows per state. Default 50, at most 500. */
  limit?: number;
  /** Newest done rows of the hot table that a done search looks through. Default 10,000. */
  recentDoneScanRows?: number;
}

export interface SearchPlan {
  name: (typeof QUERY_NAMES)[number];
  text: string;
  params: unknown[];
}

export const SEARCH_DEFAULTS = { limit: 50, recentDoneScanRows: 10_000 } as const;

/**
 * The queries a search runs, in order, with their parameters: an id or a
 * key is one lookup; a queue and/or state is one bounded query per state.
 * Pure, so the EXPLAIN test checks exactly what the page runs.
 */
export function planSearch(search: JobSearch): SearchPlan[] {
  const limit = search.limit === undefined ? SEARCH_DEFAULTS.limit : validateInt(search.limit, 'limit', 1, 500);
  const scanRows = search.recentDoneScanRows ?? SEARCH_DEFAULTS.recentDoneScanRows;
  if (search.id !== undefined) return [{ name: 'JobById', text: q.JobById, params: [validateInt(search.id, 'id', 1)] }];
  if (search.idempotencyKey !== undefined) {
    return [{ name: 'JobByIdempotencyKey', text: q.JobByIdempotencyKey, params: [validateKey(search.idempotencyKey, 'idempotencyKey')] }];
  }
  const queue = search.queue === undefined ? null : validateQueueName(search.queue);
  if (search.state !== undefined && !SEARCH_STATES.includes(search.state)) {
    throw new ValidationError('state', `"${String(search.state)}" is not a state; expected one of ${SEARCH_STATES.join(', ')}`);
  }
  const states = search.state === undefined ? SEARCH_STATES : [search.state];
  const plans: SearchPlan[] = [];
  const claimable = states.filter((s) => s === 'pending' || s === 'failed');
  if (claimable.length) plans.push({ name: 'SearchClaimable', text: q.SearchClaimable, params: [queue, claimable, limit] });
  if (states.includes('claimed')) plans.push({ name: 'SearchClaimed', text: q.SearchClaimed, params: [queue, limit] });
  if (states.includes('dead')) plans.push({ name: 'SearchDead', text: q.SearchDead, params: [queue, limit] });
  if (states.includes('cancelled')) plans.push({ name: 'SearchCancelled', text: q.SearchCancelled, params: [queue, limit] });
  if (states.includes('done')) {
    plans.push({ name: 'SearchRecentDone', text: q.SearchRecentDone, params: [queue, limit, scanRows] });
    if (queue !== null) plans.push({ name: 'SearchArchived', text: q.SearchArchived, params: [queue, limit] });
  }
  return plans;
}

/** Runs a search's plan. Rows of several states come grouped by state, each group in its query's order. */
export async function searchJobs(db: Queryable, search: JobSearch): Promise<JobView[]> {
  const out: JobView[] = [];
  const seen = new Set<number>();
  for (const plan of planSearch(search)) {
    for (const row of (await db.query(plan.text, plan.params)).rows) {
      // An archiver moving a row between two statements could show it twice.
      if (seen.has(row.id)) continue;
      seen.add(row.id);
      out.push(jobViewFromRow(row));
    }
  }
  return out;
}

export async function getJob(db: Queryable, id: number): Promise<JobView | null> {
  const row = (await db.query(q.JobById, [validateInt(id, 'id', 1)])).rows[0];
  return row ? jobViewFromRow(row) : null;
}

export interface DeadLetterInfo {
  code: DeadLetterCode;
  reason: string;
  diedAt: Date;
}

export async function deadLetterOfJob(db: Queryable, id: number): Promise<DeadLetterInfo | null> {
  const row = (await db.query(q.DeadLetterOfJob, [validateInt(id, 'id', 1)])).rows[0];
  return row ? { code: row.code, reason: row.reason, diedAt: row.died_at } : null;
}

export interface DeadLetterGroup {
  queue: string;
  code: DeadLetterCode;
  reason: string;
  jobs: number;
  firstDiedAt: Date;
  lastDiedAt: Date;
}

export async function deadLetterReasons(db: Queryable, limit = 50): Promise<DeadLetterGroup[]> {
  const rows = (await db.query(q.DeadLetterReasons, [validateInt(limit, 'limit', 1, 1000)])).rows;
  return rows.map((r) => ({ queue: r.queue, code: r.code, reason: r.reason, jobs: r.jobs, firstDiedAt: r.first_died_at, lastDiedAt: r.last_died_at }));
}

/** Where a cron job came from: its schedule and occurrence, from the key the materializer gives it. */
export function cronOrigin(job: Pick<JobView, 'idempotencyKey' | 'payload'>): { scheduleId: string; occurrence: string } | null {
  const cron = (job.payload as { cron?: { scheduleId?: unknown; occurrence?: unknown } } | null)?.cron;
  if (cron && typeof cron.scheduleId === 'string' && typeof cron.occurrence === 'string') return { scheduleId: cron.scheduleId, occurrence: cron.occurrence };
  const m = /^cron:([A-Za-z0-9_.-]{1,64}):(.+)$/.exec(job.idempotencyKey ?? '');
  return m ? { scheduleId: m[1], occurrence: m[2] } : null;
}

/** The newest operator actions of all queues, newest first. */
export async function recentAudit(db: Queryable, limit = 100): Promise<AuditEntry[]> {
  const rows = (await db.query(q.RecentAudit, [validateInt(limit, 'limit', 1, 1000)])).rows;
  return rows.map((r) => ({ id: r.id, at: r.at, actor: r.actor, reason: r.reason, verb: r.verb, queue: r.queue, jobId: r.job_id, detail: r.detail }));
}

/** One key of a fair queue as the queues page shows it. */
export interface KeyBacklog {
  queue: string;
  key: string;
  /** Its jobs due and unclaimed now. */
  due: number;
  /** How long its oldest due job has waited, ms (database clock). */
  oldestWaitMs: number;
  inFlight: number;
}

/** The `limit` largest keys by due backlog of each fair queue (a per-key cap or sequential), largest first. */
export async function largestKeys(db: Queryable, limit = 10): Promise<KeyBacklog[]> {
  const rows = (await db.query(q.LargestKeys, [validateInt(limit, 'limit', 1, 1000)])).rows;
  return rows.map((r) => ({ queue: r.queue, key: r.key, due: r.due, oldestWaitMs: Number(r.oldest_wait_ms), inFlight: r.in_flight }));
}
