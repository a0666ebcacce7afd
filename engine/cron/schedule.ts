import type { Queryable } from '../db.ts';
import { DEFAULTS } from '../defaults.ts';
import { ValidationError } from '../errors.ts';
import { loadQueries } from '../sql.ts';
import { serializePayload, validateDate, validateInt, validateQueueName } from '../validate.ts';
import { parseCron } from './expression.ts';
import {
  DEFAULT_CATCH_UP,
  DEFAULT_DST_POLICY,
  validateCatchUp,
  validateDstPolicy,
  type CatchUpPolicy,
  type DstPolicy,
} from './policy.ts';
import { validateTimeZone } from './zone.ts';

const q = loadQueries(new URL('./schedules.sql', import.meta.url), [
  'InsertSchedule',
  'ListSchedules',
  'GetSchedule',
  'PauseSchedule',
  'ResumeSchedule',
  'RemoveSchedule',
] as const);

/** What an operator gives to create a schedule. */
export interface ScheduleInput {
  /** Name, 1-64 of A-Z a-z 0-9 _ . - (it appears in every occurrence key, so no ':'). */
  id: string;
  /** 5 fields: minute hour day-of-month month day-of-week, or an alias such as @daily. */
  cron: string;
  /** IANA zone the expression is read in. Default "UTC". */
  timezone?: string;
  queue: string;
  /** A JSON object; every job gets it plus `cron: { scheduleId, occurrence }`. Default {}. */
  payload?: Record<string, unknown>;
  /** 0-9. Default 0. */
  priority?: number;
  /** Attempt budget of each job. Default: the queue's. */
  maxAttempts?: number;
  /** Default "shift-first". */
  dstPolicy?: DstPolicy;
  /** Default "none". */
  catchUp?: CatchUpPolicy;
  /** Default true. */
  enabled?: boolean;
}

export interface Schedule {
  id: string;
  cron: string;
  timezone: string;
  queue: string;
  payload: Record<string, unknown>;
  priority: number;
  maxAttempts: number | null;
  dstPolicy: DstPolicy;
  catchUp: CatchUpPolicy;
  enabled: boolean;
  /** Every occurrence at or before this instant has been handled. */
  lastMaterializedUntil: Date;
  createdAt: Date;
}

const SCHEDULE_ID = /^[A-Za-z0-9_.-]{1,64}$/;

export function validateScheduleId(value: unknown, field = 'id'): string {
  if (typeof value !== 'string' || !SCHEDULE_ID.test(value)) {
    throw new ValidationError(field, `${JSON.stringify(value)} is not a schedule id; expected 1-64 of A-Z a-z 0-9 _ . -`);
  }
  return value;
}

/** Checks every field; throws ValidationError naming the first bad one. Returns the input with defaults filled. */
export function validateSchedule(input: unknown): Required<Omit<ScheduleInput, 'maxAttempts'>> & { maxAttempts: number | null } {
  if (typeof input !== 'object' || input === null) throw new ValidationError('schedule', 'expected an object');
  const s = input as Record<string, unknown>;
  const payload = s.payload ?? {};
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new ValidationError('payload', 'expected a JSON object (the template each job payload is built from)');
  }
  if ('cron' in payload) throw new ValidationError('payload.cron', 'is reserved: the materializer sets it to name the occurrence');
  serializePayload(payload, DEFAULTS.maxPayloadBytes, 'payload');
  if (s.enabled !== undefined && typeof s.enabled !== 'boolean') throw new ValidationError('enabled', 'expected true or false');
  return {
    id: validateScheduleId(s.id),
    cron: parseCron(s.cron).expression,
    timezone: s.timezone === undefined ? 'UTC' : validateTimeZone(s.timezone),
    queue: validateQueueName(s.queue),
    payload: payload as Record<string, unknown>,
    priority: s.priority === undefined ? DEFAULTS.priority : validateInt(s.priority, 'priority', 0, 9),
    maxAttempts: s.maxAttempts === undefined ? null : validateInt(s.maxAttempts, 'maxAttempts', 1, 1000),
    dstPolicy: s.dstPolicy === undefined ? DEFAULT_DST_POLICY : validateDstPolicy(s.dstPolicy),
    catchUp: s.catchUp === undefined ? DEFAULT_CATCH_UP : validateCatchUp(s.catchUp),
    enabled: s.enabled ?? true,
  };
}

export function scheduleFromRow(r: any): Schedule {
  return {
    id: r.id,
    cron: r.cron,
    timezone: r.timezone,
    queue: r.queue,
    payload: r.payload,
    priority: r.priority,
    maxAttempts: r.max_attempts,
    dstPolicy: r.dst_policy,
    catchUp: r.catch_up,
    enabled: r.enabled,
    lastMaterializedUntil: r.last_materialized_until,
    createdAt: r.created_at,
  };
}

export interface AddScheduleOptions {
  /** Materialize occurrences after this instant. Default: the database's now(). */
  startAt?: Date | string | number;
}

/** Creates a schedule. Refuses bad input, or an id already taken, with a ValidationError. */
export async function addSchedule(db: Queryable, input: ScheduleInput, options: AddScheduleOptions = {}): Promise<Schedule> {
  const s = validateSchedule(input);
  const startAt = options.startAt === undefined ? null : validateDate(options.startAt, 'startAt');
  const res = await db.query(q.InsertSchedule, [
    s.id,
    s.cron,
    s.timezone,
    s.queue,
    JSON.stringify(s.payload),
    s.priority,
    s.maxAttempts,
    s.dstPolicy,
    s.catchUp,
    s.enabled,
    startAt,
  ]);
  if (!res.rows[0]) throw new ValidationError('id', `schedule "${s.id}" already exists; remove it first or choose another id`);
  return scheduleFromRow(res.rows[0]);
}

export async function listSchedules(db: Queryable): Promise<Schedule[]> {
  return (await db.query(q.ListSchedules)).rows.map(scheduleFromRow);
}

export async function getSchedule(db: Queryable, id: string): Promise<Schedule | null> {
  const row = (await db.query(q.GetSchedule, [validateScheduleId(id)])).rows[0];
  return row ? scheduleFromRow(row) : null;
}

async function one(db: Queryable, sql: string, params: unknown[], id: string): Promise<Schedule> {
  const row = (await db.query(sql, params)).rows[0];
  if (!row) throw new ValidationError('id', `no schedule "${id}"; expected the id of an existing schedule`);
  return scheduleFromRow(row);
}

/** Stops materializing. Occurrences already materialized (at most lookaheadMs ahead) still run. */
export function pauseSchedule(db: Queryable, id: string): Promise<Schedule> {
  return one(db, q.PauseSchedule, [validateScheduleId(id)], id);
}

/**
 * Starts materializing again from now: what fell due while paused is skipped,
 * not caught up. `now` pins the instant (tests); default the database's now().
 */
export function resumeSchedule(db: Queryable, id: string, now?: Date): Promise<Schedule> {
  return one(db, q.ResumeSchedule, [validateScheduleId(id), now ?? null], id);
}

export function removeSchedule(db: Queryable, id: string): Promise<Schedule> {
  return one(db, q.RemoveSchedule, [validateScheduleId(id)], id);
}
