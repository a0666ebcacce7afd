import { dbClockSteps, type DbClockStep, type EventOf, type HistoryEvent, type JobKind, type PreloadOrigin } from '../../harness/history.ts';
import { toEpochMs, type ReportInput } from './input.ts';

/**
 * The history, indexed once by job and by process, so every section of the
 * report reads the same facts. Pure: built from the input alone.
 */
export interface JobFacts {
  jobId: number;
  queue: string;
  kind: JobKind | null;
  /** Epoch ms (database clock) the job first became due: `runAt` of `enqueue:ok`, else of its first `job:claimed`. */
  firstDueAt: number | null;
  /** True when an `enqueue:ok` acknowledged it (false: it appeared by other means, e.g. cron materialization). */
  enqueued: boolean;
  starts: EventOf<'job:started'>[];
  claims: EventOf<'job:claimed'>[];
  failures: EventOf<'job:failed'>[];
  dead: EventOf<'job:dead'> | null;
  rescues: EventOf<'lease:rescued'>[];
  effectKeys: Set<string>;
}

export interface ProcessLife {
  node: string;
  pid: number;
  role: string;
  startedT: number | null;
  exit: EventOf<'process:exited'> | null;
}

export interface HistoryIndex {
  /** Epoch ms of history t = 0 (see `runStartEpochMs`). */
  base: number;
  /** History t of the last event, or the run's length when later. */
  endT: number;
  jobs: Map<number, JobFacts>;
  processes: ProcessLife[];
  samples: EventOf<'sample'>[];
  faults: EventOf<'fault:injected'>[];
  alerts: EventOf<'alert:crossed'>[];
  /** Steps of the simulated database clock (db-clock-jump faults), in order. */
  dbSteps: DbClockStep[];
  /** Preloaded jobs by id: delayed work or retries in backoff put in place before the load. */
  preloaded: Map<number, PreloadOrigin>;
}

/** The database's time (epoch ms) at history t: the run's base plus every database clock step made by then. */
export function dbAt(idx: Pick<HistoryIndex, 'base' | 'dbSteps'>, t: number): number {
  return idx.base + t + idx.dbSteps.filter((s) => s.t <= t).reduce((sum, s) => sum + (s.toMs - s.fromMs), 0);
}

/** The history t at which the database's clock read `dbMs` (epoch ms); an instant a step skipped over maps to the step. */
export function runTOfDb(idx: Pick<HistoryIndex, 'base' | 'dbSteps'>, dbMs: number): number {
  let shift = 0;
  for (const s of idx.dbSteps) {
    if (dbMs <= s.fromMs) break;
    if (dbMs <= s.toMs) return s.t;
    shift += s.toMs - s.fromMs;
  }
  return dbMs - idx.base - shift;
}

/**
 * Epoch ms (database clock) of history t = 0. `runAt` values come from the
 * database, `t` from the harness clock; the median of `dbTime - t` over the
 * events that carry a `dbTime` lines the two up (the median shrugs off a few
 * events recorded late). Without any, the run's `startedAt` is used.
 */
export function runStartEpochMs(input: Pick<ReportInput, 'history' | 'startedAt'>): number {
  // After a step of the database clock every dbTime reads the step further on; take it back out.
  const steps = dbClockSteps(input.history);
  const stepped = (t: number) => steps.filter((s) => s.t <= t).reduce((sum, s) => sum + (s.toMs - s.fromMs), 0);
  const offsets = input.history.filter((e) => typeof e.dbTime === 'number').map((e) => (e.dbTime as number) - e.t - stepped(e.t));
  if (offsets.length === 0) return toEpochMs(input.startedAt, 'startedAt');
  offsets.sort((a, b) => a - b);
  return offsets[Math.floor((offsets.length - 1) / 2)];
}

/**
 * Values at or above this are epoch ms; below it, ms since the run started.
 * (1e11 ms is 1973; no run lasts three years.) Used only for `intendedAt`,
 * which a load generator may record either way.
 */
const EPOCH_FLOOR_MS = 1e11;

export function toRunT(value: number, base: number): number {
  return value >= EPOCH_FLOOR_MS ? value - base : value;
}

function facts(jobs: Map<number, JobFacts>, jobId: number, queue: string): JobFacts {
  let f = jobs.get(jobId);
  if (!f) {
    f = { jobId, queue, kind: null, firstDueAt: null, enqueued: false, starts: [], claims: [], failures: [], dead: null, rescues: [], effectKeys: new Set() };
    jobs.set(jobId, f);
  }
  return f;
}

export function indexHistory(input: ReportInput): HistoryIndex {
  const base = runStartEpochMs(input);
  const durationT = toEpochMs(input.finishedAt, 'finishedAt') - toEpochMs(input.startedAt, 'startedAt');
  const kindByOp = new Map<number, JobKind>();
  const jobs = new Map<number, JobFacts>();
  const processes: ProcessLife[] = [];
  const open = new Map<number, ProcessLife>();
  const idx: HistoryIndex = { base, endT: durationT, jobs, processes, samples: [], faults: [], alerts: [], dbSteps: dbClockSteps(input.history), preloaded: new Map() };
  for (const e of input.history as HistoryEvent[]) {
    idx.endT = Math.max(idx.endT, e.t);
    switch (e.type) {
      case 'enqueue:invoke':
        kindByOp.set(e.op, e.kind);
        break;
      case 'enqueue:ok': {
        const f = facts(jobs, e.jobId, e.queue);
        f.kind = kindByOp.get(e.op) ?? f.kind;
        f.enqueued = true;
        f.firstDueAt ??= e.runAt;
        break;
      }
      case 'job:claimed': {
        const f = facts(jobs, e.jobId, e.queue);
        f.claims.push(e);
        f.firstDueAt ??= e.runAt;
        break;
      }
      case 'job:started':
        facts(jobs, e.jobId, e.queue).starts.push(e);
        break;
      case 'job:failed':
        facts(jobs, e.jobId, e.queue).failures.push(e);
        break;
      case 'job:dead':
        facts(jobs, e.jobId, e.queue).dead ??= e;
        break;
      case 'lease:rescued':
        facts(jobs, e.jobId, e.queue).rescues.push(e);
        break;
      case 'effect:applied': {
        const f = jobs.get(e.jobId);
        if (f) f.effectKeys.add(e.key);
        else facts(jobs, e.jobId, '?').effectKeys.add(e.key);
        break;
      }
      case 'process:started': {
        const life: ProcessLife = { node: e.node, pid: e.pid, role: e.role, startedT: e.t, exit: null };
        processes.push(life);
        open.set(e.pid, life);
        break;
      }
      case 'process:exited': {
        const life = open.get(e.pid);
        if (life) {
          life.exit = e;
          open.delete(e.pid);
        } else {
          processes.push({ node: e.node, pid: e.pid, role: e.role, startedT: null, exit: e });
        }
        break;
      }
      case 'preload:enqueued':
        for (const id of e.jobIds) {
          idx.preloaded.set(id, e.origin);
          facts(jobs, id, e.queue);
        }
        break;
      case 'sample':
        idx.samples.push(e);
        break;
      case 'fault:injected':
        idx.faults.push(e);
        break;
      case 'alert:crossed':
        idx.alerts.push(e);
        break;
      default:
        break;
    }
  }
  return idx;
}

/** Does a job event (its reporting node and workerId) come from this process? By node name, or by the pid inside the workerId. */
export function ranOn(e: { node: string; workerId: string }, p: ProcessLife): boolean {
  if (e.node === p.node) return true;
  const numbers: string[] = e.workerId.match(/\d+/g) ?? [];
  return numbers.includes(String(p.pid));
}
