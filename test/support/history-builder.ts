import { NO_ROWS, type EngineSampledQueue, type EventOf, type FinalState, type HistoryEvent, type JobKind, type SampledQueue } from '../../harness/history.ts';
import type { ReportInput } from '../../reports/render/index.ts';

/**
 * Small hand-written histories for checker unit tests. Every helper takes the
 * harness time `t` explicitly, so a test reads as a timeline.
 */
type Extra = { node?: string; dbTime?: number; nodeTime?: number };

export const h = {
  invoke: (t: number, op: number, kind: JobKind = 'normal', queue = 'default'): HistoryEvent => ({ t, node: 'load', type: 'enqueue:invoke', op, queue, intendedAt: t, kind }),
  ok: (t: number, op: number, jobId: number, queue = 'default', x: { runAt?: number; intendedAt?: number; sentAt?: number } = {}): HistoryEvent => ({
    t, node: 'load', type: 'enqueue:ok', op, jobId, queue, runAt: x.runAt ?? t, intendedAt: x.intendedAt ?? t, sentAt: x.sentAt ?? t,
  }),
  info: (t: number, op: number, queue = 'default'): HistoryEvent => ({ t, node: 'load', type: 'enqueue:info', op, queue, error: 'connection reset during COMMIT' }),
  fail: (t: number, op: number, queue = 'default'): HistoryEvent => ({ t, node: 'load', type: 'enqueue:fail', op, queue, error: 'refused' }),
  claim: (
    t: number,
    jobId: number,
    workerId: string,
    attempt = 1,
    x: Extra & { queue?: string; priority?: number; runAt?: number; crashCount?: number; leaseExpiresAt?: number } = {},
  ): HistoryEvent => ({
    t, node: x.node ?? workerId, type: 'job:claimed', jobId, queue: x.queue ?? 'default', priority: x.priority ?? 0, attempt, workerId, runAt: x.runAt ?? 0,
    ...(x.dbTime !== undefined ? { dbTime: x.dbTime } : {}), ...(x.nodeTime !== undefined ? { nodeTime: x.nodeTime } : {}),
    ...(x.crashCount !== undefined ? { crashCount: x.crashCount } : {}), ...(x.leaseExpiresAt !== undefined ? { leaseExpiresAt: x.leaseExpiresAt } : {}),
  }),
  /** The same report carrying a hold's fencing token (a claim, a completion, a lost lease). */
  token: (e: HistoryEvent, leaseToken: string): HistoryEvent => ({ ...e, leaseToken }) as HistoryEvent,
  renewed: (t: number, jobId: number, workerId: string, attempt: number, dbTime: number, leaseExpiresAt: number): HistoryEvent => ({
    t, node: workerId, dbTime, type: 'lease:renewed', jobId, queue: 'default', attempt, workerId, leaseExpiresAt,
  }),
  released: (t: number, jobId: number, workerId: string, attempt = 1): HistoryEvent => ({ t, node: workerId, type: 'lease:released', jobId, queue: 'default', attempt, workerId }),
  deferred: (t: number, jobId: number, workerId: string, attempt = 1): HistoryEvent => ({
    t, node: workerId, type: 'job:deferred', jobId, queue: 'default', attempt, workerId, reason: 'effect held by another holder', retryAt: 0,
  }),
  /** A rescue as the rescuer reports it now: whose lease, when it ran out, when it was taken (database clock). */
  rescuedFrom: (t: number, jobId: number, owner: string, x: { attempts?: number; crashCount?: number; dead?: boolean; dbTime?: number; leaseExpiredAt?: number } = {}): HistoryEvent => ({
    t, node: 'rescuer', type: 'lease:rescued', jobId, queue: 'default', attempts: x.attempts ?? 1, crashCount: x.crashCount ?? 1, dead: x.dead ?? false, owner,
    ...(x.dbTime !== undefined ? { dbTime: x.dbTime } : {}), ...(x.leaseExpiredAt !== undefined ? { leaseExpiredAt: x.leaseExpiredAt } : {}),
  }),
  /** What a worker reports as it starts; its node is its id unless given. */
  settings: (
    t: number,
    workerId: string,
    x: { leaseMs?: number; heartbeatMs?: number; backoffBaseMs?: number; backoffCapMs?: number; maxCrashes?: number; timeoutMs?: number | null; node?: string } = {},
  ): HistoryEvent => ({
    t, node: x.node ?? workerId, type: 'worker:settings', workerId, maxCrashes: x.maxCrashes ?? 2,
    queues: {
      default: {
        leaseMs: x.leaseMs ?? 2_000, heartbeatMs: x.heartbeatMs ?? 500, backoffBaseMs: x.backoffBaseMs ?? 1_000, backoffCapMs: x.backoffCapMs ?? 8_000,
        ...(x.timeoutMs !== undefined ? { timeoutMs: x.timeoutMs } : {}),
      },
    },
  }),
  /** The worker called the handler (node clock `nodeTime`, default t). */
  started: (t: number, jobId: number, workerId: string, attempt = 1, nodeTime = t): HistoryEvent => ({ t, node: workerId, nodeTime, type: 'job:started', jobId, queue: 'default', attempt, workerId }),
  listening: (t: number, workerId: string, node = workerId): HistoryEvent => ({ t, node, type: 'worker:listening', workerId }),
  exited: (t: number, node: string, signal: string | null = 'SIGKILL', pid = 1): HistoryEvent => ({ t, node, type: 'process:exited', pid, role: 'worker', code: null, signal, expected: false }),
  /** A worker-stop of `node` from `fromT` to `toT` (SIGSTOP at once, SIGCONT after). */
  frozen: (fromT: number, toT: number, node: string): HistoryEvent[] => [
    { t: fromT, node: 'nemesis', type: 'fault:injected', fault: 'worker-stop', detail: { target: node, forS: (toT - fromT) / 1000 } },
    { t: toT, node: 'nemesis', type: 'fault:injected', fault: 'worker-stop', detail: { target: node, phase: 'end' } },
  ],
  /** The handler of `workerId` asked for its effect (called effectOnce). */
  effectStarted: (t: number, jobId: number, workerId: string, attempt = 1): HistoryEvent => ({ t, node: workerId, type: 'effect:started', jobId, attempt, workerId }),
  /** `workerId` froze itself inside job `jobId`'s effect transaction (its own stop report), resumed by the nemesis at `toT`. */
  frozenInEffect: (fromT: number, toT: number, jobId: number, workerId: string, attempt = 1): HistoryEvent[] => [
    { t: fromT, node: workerId, type: 'fault:evidence', fault: 'worker-stop', detail: { fault: 'worker-stop', point: 'in-effect', jobId, attempt, workerId } },
    { t: toT, node: 'nemesis', type: 'fault:injected', fault: 'worker-stop', detail: { target: workerId, phase: 'end' } },
  ],
  completed: (t: number, jobId: number, workerId: string, attempt = 1, durationMs = 1): HistoryEvent => ({ t, node: workerId, type: 'job:completed', jobId, queue: 'default', attempt, workerId, durationMs }),
  failed: (t: number, jobId: number, workerId: string, attempt = 1, x: Extra & { retryAt?: number; error?: string; durationMs?: number } = {}): HistoryEvent => ({
    t, node: x.node ?? workerId, type: 'job:failed', jobId, queue: 'default', attempt, workerId, error: x.error ?? 'boom', retryAt: x.retryAt ?? 0,
    ...(x.dbTime !== undefined ? { dbTime: x.dbTime } : {}), ...(x.nodeTime !== undefined ? { nodeTime: x.nodeTime } : {}),
    ...(x.durationMs !== undefined ? { durationMs: x.durationMs } : {}),
  }),
  dead: (t: number, jobId: number, attempt: number): HistoryEvent => ({ t, node: 'w', type: 'job:dead', jobId, queue: 'default', attempt, code: 'attempts_exhausted', reason: 'attempts exhausted' }),
  leaseLost: (t: number, jobId: number, workerId: string, attempt = 1, phase: EventOf<'lease:lost'>['phase'] = 'heartbeat'): HistoryEvent => ({ t, node: workerId, type: 'lease:lost', jobId, queue: 'default', attempt, workerId, phase }),
  rescued: (t: number, jobId: number, attempts = 1, dead = false): HistoryEvent => ({ t, node: 'rescuer', type: 'lease:rescued', jobId, queue: 'default', attempts, crashCount: 1, dead }),
  /** An operator's verb call (harness/faults/inject/control.ts): sent at dbTime - 10, returned at dbTime. */
  operator: (
    t: number,
    verb: EventOf<'operator:action'>['verb'],
    jobIds: number[],
    x: Partial<Omit<EventOf<'operator:action'>, 'type' | 't' | 'verb' | 'jobIds'>> & { dbTime?: number } = {},
  ): HistoryEvent => ({
    t, node: 'operator-api', type: 'operator:action', verb, jobIds, dbTime: x.dbTime ?? t, dbBefore: x.dbBefore ?? (x.dbTime ?? t) - 10, seq: x.seq ?? 0,
    via: x.via ?? 'api', by: x.by ?? 'oncall-api', reason: x.reason ?? `scenario fault ${verb} #${t}`, outcome: x.outcome ?? 'ok', answer: x.answer ?? 'ok',
    before: x.before ?? {}, after: x.after ?? {}, ...(x.queue !== undefined ? { queue: x.queue } : {}), ...(x.refusal ? { refusal: x.refusal } : {}),
    ...(x.selection ? { selection: x.selection } : {}),
  }),
  fault: (t: number, fault: string, detail: Record<string, unknown> = {}): HistoryEvent => ({ t, node: 'nemesis', type: 'fault:injected', fault, detail }),
  evidence: (t: number, fault: string, detail: Record<string, unknown> = {}): HistoryEvent => ({ t, node: 'nemesis', type: 'fault:evidence', fault, detail }),
  /**
   * A sample where the engine's sampler and the harness's own query read the same figures: one due
   * job per queue in `ages`, that old. `own.ages` overrides the harness's ages; `engine` and
   * `harness` override single figures of a queue on one side.
   */
  sample: (
    t: number,
    ages: Record<string, number>,
    own: { ages?: Record<string, number>; dlq?: number; engineDlq?: number; done?: number; engineDone?: number; engine?: Record<string, Partial<EngineSampledQueue>>; harness?: Record<string, Partial<SampledQueue>> } = {},
  ): HistoryEvent => {
    const queues = (a: Record<string, number>, over: Record<string, Partial<SampledQueue>> = {}) => {
      const out: Record<string, SampledQueue> = {};
      for (const [queue, ms] of Object.entries(a)) out[queue] = { ...NO_ROWS, pending: 1, due: 1, oldestMs: ms };
      for (const [queue, f] of Object.entries(over)) out[queue] = { ...(out[queue] ?? NO_ROWS), ...f };
      return out;
    };
    const harnessAges = own.ages ?? ages;
    return {
      t, node: 'sampler', type: 'sample', depthByQueue: {}, oldestUnclaimedAgeMs: ages, deadLetterDepth: own.engineDlq ?? own.dlq ?? 0, claimed: 0, done: own.engineDone ?? own.done ?? 0, failed: 0, dead: 0,
      queues: Object.fromEntries(Object.entries(queues(ages, own.engine)).map(([queue, f]) => [queue, { estimated: false, ...f }])),
      harness: { oldestUnclaimedAgeMs: harnessAges, deadLetterDepth: own.dlq ?? 0, xminAgeMs: 0, queues: queues(harnessAges, own.harness), done: own.done ?? 0 },
    };
  },
  alert: (t: number, signal: string, direction: 'up' | 'down'): HistoryEvent => ({ t, node: 'sampler', type: 'alert:crossed', signal, value: 0, threshold: 0, direction }),
};

type FinalJob = FinalState['jobs'][number];

export function job(id: number, state: string, x: Partial<Omit<FinalJob, 'id' | 'state'>> = {}): FinalJob {
  return {
    id, state, queue: x.queue ?? 'default', attempts: x.attempts ?? 1, priority: x.priority ?? 0, idempotencyKey: x.idempotencyKey ?? `op:${id}`, ...(x.kind ? { kind: x.kind } : {}), ...(x.runAtMs !== undefined ? { runAtMs: x.runAtMs } : {}),
    ...(x.maxAttempts !== undefined ? { maxAttempts: x.maxAttempts } : {}), ...(x.crashCount !== undefined ? { crashCount: x.crashCount } : {}),
    ...(x.errorCount !== undefined ? { errorCount: x.errorCount } : {}),
    ...(x.archived ? { archived: true, finishedAtMs: x.finishedAtMs, archivedAtMs: x.archivedAtMs } : {}),
    ...(x.producerKey ? { producerKey: x.producerKey } : {}),
  };
}

export function finalState(jobs: FinalJob[], x: Partial<Omit<FinalState, 'jobs'>> = {}): FinalState {
  return {
    jobs, deadLetters: x.deadLetters ?? [], effects: x.effects ?? {}, ...(x.effectRows ? { effectRows: x.effectRows } : {}),
    ...(x.effectKeys ? { effectKeys: x.effectKeys } : {}), ...(x.dbNowMs !== undefined ? { dbNowMs: x.dbNowMs } : {}),
    ...(x.schedules ? { schedules: x.schedules } : {}),
    ...(x.audit ? { audit: x.audit } : {}),
  };
}

/** Epoch ms of t = 0 in hand-written report inputs. */
export const REPORT_BASE = Date.parse('2026-11-30T10:00:00.000Z');

/** A report input around a hand-written history: a 20 s passing run of a tiny scenario, patched as a test needs. */
export function reportInput(history: HistoryEvent[], patch: Partial<ReportInput> = {}): ReportInput {
  return {
    scenario: { name: 'tiny', description: 'hand-written' },
    seed: 7,
    replayCommand: 'npx tsx bin/run-scenario.ts tiny --seed 7',
    startedAt: REPORT_BASE,
    finishedAt: REPORT_BASE + 20_000,
    interrupted: false,
    verdict: 'pass',
    offeredRate: 1,
    achievedRate: 1,
    history,
    final: { jobs: [], deadLetters: [], effects: {} },
    invariants: [{ name: 'no-lost-jobs', pass: true, figure: '0 lost of 3', bound: '0', judged: { n: 3, what: 'acknowledged enqueues' } }],
    thresholds: { oldestAgeSloMs: 5_000, deadLetterDepth: 1 },
    ...patch,
  };
}
