import type { DeadLetterCode } from '../../../engine/dead-letters.ts';
import {
  type Actor,
  cancelJob,
  ControlRefusedError,
  deadLetterJob,
  getQueueControl,
  pauseQueue,
  redriveDeadLetters,
  resumeQueue,
  retryJob,
  setQueueLimits,
} from '../../../engine/control/index.ts';
import { enqueue } from '../../../engine/enqueue.ts';
import { limitArgv, refusalLine, runControlCli } from '../../runner/control-cli.ts';
import type { EventOf, Forgery, OperatorVerb } from '../../history.ts';
import { FORGERIES, type DashboardClient } from '../../runner/dashboard-client.ts';
import { harnessQueries as q } from '../../runner/queries.ts';
import type { FaultAction } from '../plan.ts';
import type { OperatorPath } from '../spec.ts';
import { evidence, holdUntil, injected, type InjectionContext, type Injector } from './context.ts';

/**
 * The operator's control verbs as faults (docs/operating.md): cancel,
 * retry, dead-letter, redrive, pause/resume and set-limits, each issued
 * while the load and the other faults go on, through the engine's API or
 * the dashboard's POST actions (`via`). Every verb call goes into the
 * history as `operator:action`: its targets and what each was asked to be,
 * who and why, the answer or the typed refusal, each target's state just
 * before and just after (the evidence that the verb met what it was aimed
 * at), and the database's time once it returned. The invariants judge the
 * rest: cancel-honoured, redrive-reruns, operator-audited, paused-queue-idle.
 */

interface Call {
  verb: OperatorVerb;
  queue?: string;
  jobIds: number[];
  picked?: Record<string, string>;
  selection?: EventOf<'operator:action'>['selection'];
  /** Jobs whose states to read before and after, when more than the targets (a redrive: every dead letter of its queue). */
  readIds?: number[];
  /** The targets as the answer and the states after tell them (a bulk redrive's: what it moved). Default jobIds. */
  targetsAfter?: (after: Record<string, string>) => number[];
  /** The engine's call, as `actor`; resolves with its answer in words. */
  api: (actor: Actor) => Promise<string>;
  /** The dashboard's verb (engine/dashboard/actions.ts) and its form fields. */
  dashboard: [string, Record<string, string>];
  /** The `stampede control` command and its arguments (bin/control-commands.ts), without --by and --reason. */
  cli: string[];
}

/** Who acts: one name per path, so the audit shows which way a change came. */
export function actorOf(action: FaultAction, via: OperatorPath, n: number) {
  return { by: `oncall-${via}`, reason: `scenario fault ${action.fault} #${action.seq}.${n}` };
}

async function jobStates(ctx: InjectionContext, ids: number[]): Promise<Record<string, string>> {
  const res = await ctx.db.query(q.JobStates, [ids]);
  return Object.fromEntries(ids.map((id) => [String(id), res.rows.find((r) => Number(r.id) === id)?.state ?? 'missing']));
}

async function queueState(ctx: InjectionContext, queue: string): Promise<Record<string, string>> {
  const c = await getQueueControl(ctx.db, queue);
  return { [queue]: `${c?.paused ? 'paused' : 'running'} maxInFlight=${c?.maxInFlight ?? 'none'} maxStartsPerSecond=${c?.maxStartsPerSecond ?? 'none'}` };
}

let calls = 0;

/** Issues one verb and records it; returns the history event. A refusal is an answer, recorded; any other error throws. */
async function issue(ctx: InjectionContext, action: FaultAction, call: Call): Promise<EventOf<'operator:action'>> {
  const via = ((action.params.via as OperatorPath | undefined) ?? 'api') satisfies OperatorPath;
  const actor = actorOf(action, via, calls++);
  const ids = call.readIds ?? call.jobIds;
  const read = () => (call.queue !== undefined && ids.length === 0 && call.verb !== 'redrive' ? queueState(ctx, call.queue) : jobStates(ctx, ids));
  const before = await read();
  const dbBefore = ((await ctx.db.query(q.DbNow)).rows[0].now as Date).getTime();
  let outcome: 'ok' | 'refused' = 'ok';
  let answer: string;
  let refusal: string | undefined;
  let exitCode: number | undefined;
  if (via === 'cli') {
    const res = await runControlCli(ctx.controlCli, ctx.url, call.cli, actor, ctx.signal);
    exitCode = res.exitCode;
    // Exit 0: done, its answer on stdout; anything else a refusal by the command line's own word, its message on stderr.
    if (res.exitCode === 0) answer = res.stdout.trim();
    else [outcome, answer, refusal] = ['refused', refusalLine(res.stderr), `exit ${res.exitCode}`];
  } else if (via === 'dashboard') {
    if (!ctx.dashboard) throw new Error(`${action.fault}: via dashboard, but the run serves no dashboard`);
    await forgeFirst(ctx, ctx.dashboard, call, actor, read);
    const res = await ctx.dashboard.act(call.dashboard[0], call.dashboard[1], actor);
    answer = res.text;
    if (!res.ok) [outcome, refusal] = ['refused', res.text];
  } else {
    try {
      answer = await call.api(actor);
    } catch (err) {
      if (!(err instanceof ControlRefusedError)) throw err;
      [outcome, answer, refusal] = ['refused', err.message, err.name];
    }
  }
  const dbTime = ((await ctx.db.query(q.DbNow)).rows[0].now as Date).getTime();
  const after = await read();
  const event: EventOf<'operator:action'> = {
    type: 'operator:action',
    node: `operator-${via}`,
    t: 0,
    dbTime,
    dbBefore,
    seq: action.seq,
    verb: call.verb,
    via,
    ...(exitCode !== undefined ? { exitCode, command: call.cli } : {}),
    ...actor,
    ...(call.queue !== undefined ? { queue: call.queue } : {}),
    jobIds: call.targetsAfter?.(after) ?? call.jobIds,
    outcome,
    answer,
    ...(refusal !== undefined ? { refusal } : {}),
    before,
    after,
    ...(call.picked ? { picked: call.picked } : {}),
    ...(call.selection ? { selection: call.selection } : {}),
  };
  const { t: _t, ...recordable } = event;
  ctx.recorder.record(recordable);
  return event;
}

/**
 * Before the operator's own dashboard action, the same verb on the same targets, forged each way of FORGERIES
 * (by GET, with no session, no CSRF token, another one, from a foreign Origin), each recorded as
 * `dashboard:forged` with the response and its targets' states around it: dashboard-refuses-forged judges that
 * each was refused and changed nothing.
 */
async function forgeFirst(ctx: InjectionContext, dashboard: DashboardClient, call: Call, actor: Actor, read: () => Promise<Record<string, string>>): Promise<void> {
  for (const forgery of Object.keys(FORGERIES) as Forgery[]) {
    const intruder = { by: 'intruder', reason: `forged (${forgery}) beside ${actor.reason}` };
    const before = await read();
    const res = await dashboard.forge(forgery, call.dashboard[0], call.dashboard[1], intruder);
    const after = await read();
    ctx.recorder.record({
      type: 'dashboard:forged',
      node: 'intruder',
      forgery,
      verb: call.verb,
      ...intruder,
      ...(call.queue !== undefined ? { queue: call.queue } : {}),
      jobIds: call.jobIds,
      ...res,
      before,
      after,
    });
  }
}

/** Finds one job of a state to act on (of `kinds`, in the fault's queue), none picked before in this action. */
function pick(ctx: InjectionContext, action: FaultAction, state: string, kinds: string[] | null): (taken: number[]) => Promise<number[]> {
  const queue = (action.params.queue as string | undefined) ?? null;
  return async (taken) => (await ctx.db.query(q.PickJobs, [queue, state, 1, kinds, taken])).rows.map((r) => Number(r.id));
}

const kindsOf = (action: FaultAction, fallback: string[]) => ((action.params.kinds as string | undefined)?.split(',') ?? fallback);

/** The verb's call on job `id`, picked as `what` (running, pending, ...). */
type JobVerbCall = (id: number, what: string) => Pick<Call, 'verb' | 'api' | 'dashboard' | 'cli'>;

/** What to act on: `count` jobs picked as `what` (running, pending, done, failed, dead), one at a time by `find`. */
type Wanted = [what: string, count: unknown, find: (taken: number[]) => Promise<number[]>];

/**
 * One verb per job, in turn, each target picked just before its verb (a running job picked a second
 * earlier may be done by the time a slow dashboard's POST lands). Records the injection, and evidence for
 * each target that was still in the state it was picked in when its verb came.
 */
async function actOnEach(ctx: InjectionContext, action: FaultAction, wanted: Wanted[], verbFor: JobVerbCall): Promise<void> {
  injected(ctx, action, { wanted: Object.fromEntries(wanted.map(([what, n]) => [what, n ?? 0])), via: action.params.via ?? 'api' });
  const met: Record<string, number> = {};
  const taken: number[] = [];
  for (const [what, count, find] of wanted) {
    for (let i = 0; i < (typeof count === 'number' ? count : 0); i++) {
      const [id] = await find(taken);
      if (id === undefined) break;
      taken.push(id);
      const e = await issue(ctx, action, { ...verbFor(id, what), jobIds: [id], picked: { [id]: what } });
      // It bit: the job was still what it was picked as when the verb came (a running job really was running).
      if (e.before[id] === STATE_OF[what]) met[what] = (met[what] ?? 0) + 1;
    }
  }
  if (Object.keys(met).length) evidence(ctx, action, { met });
}

/** What a picked target's state is while it is what it was picked as. */
const STATE_OF: Record<string, string> = { running: 'claimed', pending: 'pending', done: 'done', failed: 'failed', dead: 'dead' };

export const cancelJobs: Injector = (action, ctx) =>
  actOnEach(
    ctx,
    action,
    [
      ['running', action.params.running, pick(ctx, action, 'claimed', kindsOf(action, ['slow']))],
      ['pending', action.params.pending, pick(ctx, action, 'pending', null)],
      ['done', action.params.done, pick(ctx, action, 'done', null)],
    ],
    (id) => ({
      verb: 'cancel',
      api: async (actor) => `cancelled (it was ${(await cancelJob(ctx.db, id, actor)).from})`,
      dashboard: ['cancel', { jobId: String(id) }],
      cli: ['cancel', String(id)],
    }),
  );

export const deadLetterJobs: Injector = (action, ctx) =>
  actOnEach(
    ctx,
    action,
    [
      ['running', action.params.running, pick(ctx, action, 'claimed', kindsOf(action, ['slow']))],
      ['pending', action.params.pending, pick(ctx, action, 'pending', null)],
    ],
    (id, what) => ({
      verb: 'dead-letter',
      api: async (actor) => `dead-lettered (it was ${(await deadLetterJob(ctx.db, id, actor)).from})`,
      dashboard: ['dead-letter', { jobId: String(id) }],
      // At the command line a running job is killed (`kill`, dead-letter's other name), a pending one dead-lettered.
      cli: [what === 'running' ? 'kill' : 'dead-letter', String(id)],
    }),
  );

/** Dead letters whose attempts ran out, however the last one ended (not a crash loop's, not an operator's). */
const RAN_OUT: readonly DeadLetterCode[] = ['attempts_exhausted', 'timeout', 'lease_expired'];

/** Failed jobs waiting out a backoff, and dead jobs whose attempts ran out (not a crash loop's: those are redrive's). */
export const retryJobs: Injector = (action, ctx) => {
  const queue = (action.params.queue as string | undefined) ?? null;
  const deadOne = async (taken: number[]) =>
    (await ctx.db.query(q.PickDeadByCode, [queue, RAN_OUT, 1 + taken.length])).rows.map((r) => Number(r.id)).filter((id) => !taken.includes(id));
  return actOnEach(
    ctx,
    action,
    [
      ['failed', action.params.failed, pick(ctx, action, 'failed', null)],
      ['dead', action.params.dead, deadOne],
    ],
    (id) => ({
      verb: 'retry',
      api: async (actor) => `due now (it was ${(await retryJob(ctx.db, id, actor)).from})`,
      dashboard: ['retry', { jobId: String(id) }],
      cli: ['retry', String(id)],
    }),
  );
};

/** How long a redrive waits for a dead letter it would select (a crash loop still being convicted). */
const REDRIVE_WAIT_MS = 15_000;

/**
 * A bulk redrive of a queue's dead letters whose reason contains `matching`,
 * once there is one (up to 15 s).
 * The queue's dead letters just before are recorded with the call, so the
 * checkers know what it should have moved and what it must have left. The
 * engine's API answers the ids it moved; the dashboard answers a count, so
 * there the ids are the matching dead letters no longer dead just after.
 */
export const redriveJobs: Injector = async (action, ctx) => {
  const queue = (action.params.queue as string | undefined) ?? ctx.defaultQueue;
  const matching = (action.params.matching as string | undefined) ?? null;
  const readDead = async () => (await ctx.db.query(q.DeadLettersOfQueue, [queue])).rows.map((r) => ({ jobId: Number(r.job_id), reason: r.reason as string }));
  const matches = (d: { reason: string }) => matching === null || d.reason.includes(matching);
  // A redrive of nothing proves nothing: wait (a while) for the convictions it is aimed at.
  let deadBefore = await readDead();
  for (const until = ctx.clock.now() + REDRIVE_WAIT_MS; !deadBefore.some(matches) && ctx.clock.now() < until && !ctx.signal.aborted; deadBefore = await readDead()) {
    await ctx.clock.sleep(100, ctx.signal).catch(() => {});
  }
  const selected = deadBefore.filter(matches).map((d) => d.jobId);
  injected(ctx, action, { queue, matching, deadLetters: deadBefore.length, selected: selected.length, via: action.params.via ?? 'api' });
  let moved: number[] | undefined;
  const e = await issue(ctx, action, {
    verb: 'redrive',
    queue,
    jobIds: selected,
    readIds: deadBefore.map((d) => d.jobId),
    selection: { reasonContains: matching, deadBefore },
    api: async (actor) => {
      moved = await redriveDeadLetters(ctx.db, { queue, ...(matching === null ? {} : { reasonContains: matching }) }, actor);
      return `redriven: ${moved.join(',')}`;
    },
    targetsAfter: (after) => moved ?? selected.filter((id) => after[id] !== 'dead'),
    dashboard: ['redrive-bulk', { queue, ...(matching === null ? {} : { reasonContains: matching }) }],
    cli: ['redrive', '--queue', queue, ...(matching === null ? [] : ['--matching', matching])],
  });
  if (e.jobIds.length) evidence(ctx, action, { queue, redriven: e.jobIds.length, wereDead: e.jobIds.filter((id) => e.before[id] === 'dead').length });
};

export const setLimits: Injector = async (action, ctx) => {
  const queue = (action.params.queue as string | undefined) ?? ctx.defaultQueue;
  const limits = { maxInFlight: (action.params.maxInFlight as number | undefined) ?? null, maxStartsPerSecond: (action.params.maxStartsPerSecond as number | undefined) ?? null };
  injected(ctx, action, { queue, ...limits, via: action.params.via ?? 'api' });
  const e = await issue(ctx, action, {
    verb: 'set-limits',
    queue,
    jobIds: [],
    api: async (actor) => {
      const c = await setQueueLimits(ctx.db, queue, limits, actor);
      return `maxInFlight=${c.maxInFlight ?? 'none'} maxStartsPerSecond=${c.maxStartsPerSecond ?? 'none'}`;
    },
    dashboard: ['set-limits', { queue, maxInFlight: String(limits.maxInFlight ?? ''), maxStartsPerSecond: String(limits.maxStartsPerSecond ?? '') }],
    cli: limitArgv(queue, limits),
  });
  if (e.outcome === 'ok' && e.after[queue] !== e.before[queue]) evidence(ctx, action, { queue, before: e.before[queue], after: e.after[queue] });
  // Set at the command line, read back there: `show` must print the limits just set, `audit` list the change.
  if (e.via === 'cli' && e.outcome === 'ok') await readBack(ctx, e, queue);
};

/** `stampede control show <queue>` and `audit --queue <queue>` right after a change made at the command line, recorded as `control:read`. */
async function readBack(ctx: InjectionContext, e: EventOf<'operator:action'>, queue: string): Promise<void> {
  for (const command of [['show', queue], ['audit', '--queue', queue, '--limit', '20']]) {
    const res = await runControlCli(ctx.controlCli, ctx.url, command, null, ctx.signal);
    const output = res.exitCode === 0 ? res.stdout : refusalLine(res.stderr);
    ctx.recorder.record({ type: 'control:read', node: 'operator-cli', command, exitCode: res.exitCode, output, verb: e.verb, queue, by: e.by, state: e.after[queue] ?? '' });
  }
}

/** The id the cli-typos fault types when the queue has no operator's dead letter: beyond any a run enqueues. */
const NO_SUCH_JOB = 999_999_999;

/** The typist of the cli-typos fault: the audit's rows under this name are what a typo changed. */
const TYPIST = 'oncall-cli-typist';

/**
 * An operator's typos at the command line, each its own `stampede control` process, recorded as `control:typo`
 * with the bad input it must name and the states it could have changed; cli-refuses-bad-input judges them. The
 * typo'd id is an operator's dead letter of the queue (a stray letter after it), which the other operator faults
 * leave alone (retry picks dead letters whose attempts ran out, redrive those it matches), so a lenient parser's
 * retry would show as a change. It bit when at least one typo was answered.
 */
export const cliTypos: Injector = async (action, ctx) => {
  const queue = (action.params.queue as string | undefined) ?? ctx.defaultQueue;
  const [dead] = (await ctx.db.query(q.PickDeadByCode, [queue, ['operator'], 1])).rows.map((r) => Number(r.id));
  // Without one, an id no job has: any live job would be moved by the workers or the archiver meanwhile, which the
  // checker would read as the typo's doing. A lenient parser then shows in its message (the id without its stray letter).
  const id = dead ?? NO_SUCH_JOB;
  const typos: { command: string[]; input: string; withActor?: false }[] = [
    { command: ['retry', `${id}x`], input: `${id}x` },
    { command: ['cancel', '0'], input: '"0"' },
    { command: ['limit', queue, '--max-in-flight', '0'], input: '"0"' },
    { command: ['limit', queue, '--max-starts-per-second', 'fast'], input: '"fast"' },
    { command: ['pasue', queue], input: '"pasue"' },
    { command: ['key-weight', queue, 'tenant-a', '0'], input: '"0"' },
    { command: ['pause', queue], input: '--by', withActor: false },
  ];
  injected(ctx, action, { queue, jobId: id, typos: typos.length, deadLetterOfOperator: dead !== undefined });
  const actor = { by: TYPIST, reason: `scenario fault ${action.fault} #${action.seq}` };
  const read = async () => ({ ...(await jobStates(ctx, [id])), ...(await queueState(ctx, queue)) });
  const auditRows = async () => (await ctx.db.query(q.AuditRowsBy, [TYPIST])).rows[0].n as number;
  let answered = 0;
  for (const t of typos) {
    if (ctx.signal.aborted) break;
    const [before, auditBefore] = [await read(), await auditRows()];
    const res = await runControlCli(ctx.controlCli, ctx.url, t.command, t.withActor === false ? null : actor, ctx.signal);
    const [after, auditAfter] = [await read(), await auditRows()];
    const answer = res.exitCode === 0 ? res.stdout.trim() : refusalLine(res.stderr);
    ctx.recorder.record({ type: 'control:typo', node: 'operator-cli', command: t.command, input: t.input, exitCode: res.exitCode, answer, before, after, auditBefore, auditAfter });
    answered++;
  }
  if (answered) evidence(ctx, action, { queue, answered, jobId: id });
};

/** The database time a dashboard's pause or resume message names ("… paused at 2026-…Z."). */
function timeInAnswer(answer: string): number | undefined {
  const iso = /at (\d{4}-\d\d-\d\dT[\d:.]+Z)/.exec(answer)?.[1];
  return iso ? Date.parse(iso) : undefined;
}

/** How long the pause-with-suspect fault waits for its poison to be claimed before it pauses anyway. */
const SUSPECT_CLAIM_WAIT_MS = 30_000;

/** Enqueues a poison in the queue, due now, and waits until a worker holds it (the database says so). */
async function poisonClaimed(ctx: InjectionContext, action: FaultAction, queue: string): Promise<number | undefined> {
  const job = await enqueue(ctx.db, queue, { kind: 'poison', params: { durationMs: 5 } }, { idempotencyKey: `fault:${action.seq}:suspect`, maxAttempts: ctx.maxAttempts });
  const until = ctx.clock.now() + SUSPECT_CLAIM_WAIT_MS;
  while (ctx.clock.now() < until && !ctx.signal.aborted) {
    const state = (await jobStates(ctx, [job.id]))[job.id];
    if (state !== 'pending' && state !== 'failed') return job.id;
    await ctx.clock.sleep(10, ctx.signal).catch(() => {});
  }
  return undefined;
}

/**
 * An operator pauses a queue for forS seconds, then resumes it. The history
 * gets `queue:paused` / `queue:resumed` with the database's times, which the
 * paused-queue-idle checker judges claims by. With `suspect`, a poison is
 * enqueued first and the pause comes as a worker takes it: the worker dies,
 * and the job falls due again as a suspect while the queue is paused.
 * Evidence: jobs of the queue were due and waiting when it resumed (a pause
 * of an empty queue proves nothing); with `suspect`, a suspect among them.
 */
export const queuePause: Injector = async (action, ctx) => {
  const queue = (action.params.queue as string | undefined) ?? ctx.defaultQueue;
  const suspectId = action.params.suspect ? await poisonClaimed(ctx, action, queue) : undefined;
  const startedT = ctx.recorder.now();
  const paused = await issue(ctx, action, {
    verb: 'pause',
    queue,
    jobIds: [],
    api: async (actor) => `paused at ${(await pauseQueue(ctx.db, queue, { ...actor, allowNew: true })).pausedAt.toISOString()}`,
    dashboard: ['pause-queue', { queue }],
    cli: ['pause', queue, '--new'],
  });
  const pausedAt = timeInAnswer(paused.answer);
  if (paused.outcome === 'ok' && pausedAt !== undefined) ctx.recorder.record({ type: 'queue:paused', node: 'nemesis', queue, by: paused.by, dbTime: pausedAt });
  injected(ctx, action, { phase: 'start', queue, forS: action.params.forS, ...(suspectId !== undefined ? { suspectId } : {}) });
  await holdUntil(ctx, action, startedT);
  const waiting = (await ctx.db.query(q.DueInQueue, [queue])).rows[0].n as number;
  const suspects = (await ctx.db.query(q.SuspectsDue, [queue])).rows[0].n as number;
  const resumed = await issue(ctx, action, {
    verb: 'resume',
    queue,
    jobIds: [],
    api: async (actor) => `resumed at ${(await resumeQueue(ctx.db, queue, actor)).resumedAt.toISOString()}`,
    dashboard: ['resume-queue', { queue }],
    cli: ['resume', queue],
  });
  const resumedAt = timeInAnswer(resumed.answer);
  if (resumed.outcome === 'ok' && resumedAt !== undefined) ctx.recorder.record({ type: 'queue:resumed', node: 'nemesis', queue, by: resumed.by, dbTime: resumedAt });
  injected(ctx, action, { phase: 'end', queue });
  if (waiting > 0 && (!action.params.suspect || suspects > 0)) evidence(ctx, action, { queue, dueWhenResumed: waiting, suspectsDue: suspects });
};
