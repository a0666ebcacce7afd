import type { EventOf, HistoryEvent } from '../../harness/history.ts';
import type { ReportInput } from './input.ts';
import { ranOn, type HistoryIndex, type ProcessLife } from './job-index.ts';
import { fmtCount, fmtDetail, fmtList, fmtOffset, fmtT, plural } from './format.ts';
import { compoundingSentence, findHerd, herdSentence, recoveryAfter, type Herd } from './herd.ts';

export type { Herd } from './herd.ts';

/**
 * Root cause, derived from the history: which job crashed which processes,
 * which node's clock moved and what it then materialized, whether a herd of
 * due jobs arrived at once, what the failures said. Every sentence is built
 * from recorded events; a fault with no recorded consequence says so.
 */
export interface Crasher {
  jobId: number;
  queue: string;
  crashes: number;
  pids: number[];
  nodes: string[];
  firstCrashT: number;
  lastCrashT: number;
  dead: EventOf<'job:dead'> | null;
  deadT: number | null;
  attempts: number;
}

export interface ClockJump {
  node: string;
  t: number;
  /** The jump the fault asked for, ms; null when its detail did not say. */
  requestedMs: number | null;
  /** The node's clock offset measured from its events' nodeTime after the jump, ms; null without nodeTime. */
  observedMs: number | null;
  occurrences: number;
  inserted: number;
  /** Materialization passes by this node after the jump. */
  passes: number;
  bySchedule: Record<string, number>;
  /** Mean occurrences per materialization pass by this node before the jump. */
  perPassBefore: number | null;
  /** The node's clock stepped with the database's (a `db-clock-jump`), so the two still agreed. */
  withDatabase: boolean;
}

export interface RootCause {
  crashers: Crasher[];
  clockJumps: ClockJump[];
  herd: Herd | null;
  findings: string[];
}

/** Per job attempt, when it stopped being in flight (finished, failed, lost its lease, or was rescued). */
function attemptEnds(history: readonly HistoryEvent[]): Map<string, number> {
  const ends = new Map<string, number>();
  for (const e of history) {
    if (e.type === 'job:completed' || e.type === 'job:failed' || e.type === 'lease:lost') {
      const k = `${e.jobId}/${e.attempt}`;
      if (!ends.has(k)) ends.set(k, e.t);
    }
  }
  return ends;
}

interface CrashAnalysis {
  crashers: Crasher[];
  /** Unexpected exits with no job recorded in flight. */
  unattributed: ProcessLife[];
  /** Unexpected exits with jobs in flight, none of which turned up in another crash. */
  unexplained: { life: ProcessLife; jobIds: number[] }[];
  /** Jobs that went down with a crasher's process without being the crasher. */
  bystanders: number;
}

function findCrashers(input: ReportInput, idx: HistoryIndex): CrashAnalysis {
  const ends = attemptEnds(input.history);
  // Per unexpected exit, the jobs in flight on that process, with how long each had been running.
  const crashes: { life: ProcessLife; inFlight: { jobId: number; ranMs: number }[] }[] = [];
  const involvements = new Map<number, number>();
  const unattributed: ProcessLife[] = [];
  for (const p of idx.processes) {
    if (!p.exit || p.exit.expected) continue;
    const te = p.exit.t;
    const inFlight: { jobId: number; ranMs: number }[] = [];
    for (const f of idx.jobs.values()) {
      const attempt = f.starts.find((s, i) => {
        if (s.t > te || (p.startedT !== null && s.t < p.startedT) || !ranOn(s, p)) return false;
        const next = f.starts[i + 1]?.t ?? Infinity;
        const rescued = f.rescues.find((r) => r.t >= s.t)?.t ?? Infinity;
        return Math.min(ends.get(`${s.jobId}/${s.attempt}`) ?? Infinity, next, rescued) >= te;
      });
      if (attempt) {
        inFlight.push({ jobId: f.jobId, ranMs: te - attempt.t });
        involvements.set(f.jobId, (involvements.get(f.jobId) ?? 0) + 1);
      }
    }
    if (inFlight.length === 0) unattributed.push(p);
    else crashes.push({ life: p, inFlight });
  }
  // Every job on a crashed process dies with it; the likely culprit of each crash is the one that keeps
  // turning up in crashes (then: known poison, then: the one that had run the shortest time).
  const blamed = new Map<number, ProcessLife[]>();
  const onCrashed = new Set<number>();
  for (const c of crashes) {
    const rank = (j: { jobId: number; ranMs: number }) => [-(involvements.get(j.jobId) ?? 0), idx.jobs.get(j.jobId)!.kind === 'poison' ? 0 : 1, j.ranMs];
    const top = [...c.inFlight].sort((a, b) => {
      const ra = rank(a);
      const rb = rank(b);
      return ra[0] - rb[0] || ra[1] - rb[1] || ra[2] - rb[2];
    })[0];
    blamed.set(top.jobId, [...(blamed.get(top.jobId) ?? []), c.life]);
    for (const j of c.inFlight) onCrashed.add(j.jobId);
  }
  const crashers: Crasher[] = [];
  for (const [jobId, lives] of blamed) {
    const f = idx.jobs.get(jobId)!;
    const crashCount = Math.max(involvements.get(jobId) ?? 0, ...f.rescues.map((r) => r.crashCount));
    // One crash with a job in flight is not a pattern, unless the job is known poison.
    if (crashCount < 2 && f.kind !== 'poison') continue;
    const deadRescue = f.rescues.find((r) => r.dead);
    crashers.push({
      jobId,
      queue: f.queue,
      crashes: crashCount,
      pids: lives.map((l) => l.pid),
      nodes: [...new Set(lives.map((l) => l.node))],
      firstCrashT: Math.min(...lives.map((l) => l.exit!.t)),
      lastCrashT: Math.max(...lives.map((l) => l.exit!.t)),
      dead: f.dead,
      deadT: f.dead?.t ?? deadRescue?.t ?? null,
      attempts: Math.max(f.dead?.attempt ?? 0, deadRescue?.attempts ?? 0, f.claims.length),
    });
  }
  crashers.sort((a, b) => b.crashes - a.crashes || a.jobId - b.jobId);
  const named = new Set(crashers.map((c) => c.jobId));
  const unexplained = crashes.filter((c) => !c.inFlight.some((j) => named.has(j.jobId))).map((c) => ({ life: c.life, jobIds: c.inFlight.map((j) => j.jobId) }));
  const explainedJobs = new Set(crashes.filter((c) => c.inFlight.some((j) => named.has(j.jobId))).flatMap((c) => c.inFlight.map((j) => j.jobId)));
  const bystanders = [...onCrashed].filter((id) => explainedJobs.has(id) && !named.has(id)).length;
  return { crashers, unattributed, unexplained, bystanders };
}

const CLOCK_FAULT = /clock|skew|time|dst/i;

/** A fault event that closes a fault's window (`detail.phase: 'end'`), not a new injection. */
export function isFaultEnd(f: EventOf<'fault:injected'>): boolean {
  return f.detail.phase === 'end';
}

/** The node a fault names: `detail.node`, `nodeId` or `target`; a scenario NodeRef such as `scheduler:1` becomes the node name `scheduler-1`. */
function faultNode(d: Record<string, unknown>): string {
  const raw = String(d.node ?? d.nodeId ?? d.target ?? '');
  const ref = /^(worker|scheduler):(\d+)$/.exec(raw);
  return ref ? `${ref[1]}-${ref[2]}` : raw;
}
const JUMP_KEYS = ['jumpMs', 'offsetMs', 'deltaMs', 'skewMs', 'byMs', 'ms'];

function findClockJumps(input: ReportInput, idx: HistoryIndex): ClockJump[] {
  const jumps: ClockJump[] = [];
  const clockFaults = idx.faults.filter((f) => CLOCK_FAULT.test(f.fault));
  clockFaults.forEach((fault, i) => {
    const d = fault.detail;
    // A database clock step names the nodes whose clocks stepped with it.
    const nodes = fault.fault === 'db-clock-jump' ? (Array.isArray(d.nodesStepped) ? d.nodesStepped.map(String) : []) : [faultNode(d)];
    for (const node of nodes) jumpOf(fault, node, i);
  });
  function jumpOf(fault: EventOf<'fault:injected'>, node: string, i: number): void {
    const d = fault.detail;
    if (!node || isFaultEnd(fault)) return;
    const key = JUMP_KEYS.find((k) => typeof d[k] === 'number');
    // The jump lasts until the next clock fault on the same node (its end, or another jump).
    const until = clockFaults.slice(i + 1).find((f) => faultNode(f.detail) === node)?.t ?? Infinity;
    const mine = (e: HistoryEvent) => e.node === node || (e.type === 'cron:materialized' && e.nodeId === node);
    const offsets = input.history
      .filter((e) => mine(e) && e.t >= fault.t && e.t < until && typeof e.nodeTime === 'number')
      .map((e) => (e.nodeTime as number) - (idx.base + e.t))
      .sort((a, b) => a - b);
    const mats = input.history.filter((e): e is EventOf<'cron:materialized'> => e.type === 'cron:materialized' && mine(e));
    const after = mats.filter((m) => m.t >= fault.t && m.t < until);
    const before = mats.filter((m) => m.t < fault.t);
    const bySchedule: Record<string, number> = {};
    for (const m of after) bySchedule[m.scheduleId] = (bySchedule[m.scheduleId] ?? 0) + m.occurrences;
    jumps.push({
      node,
      t: fault.t,
      requestedMs: key ? (d[key] as number) : null,
      observedMs: offsets.length ? offsets[Math.floor((offsets.length - 1) / 2)] : null,
      occurrences: after.reduce((n, m) => n + m.occurrences, 0),
      inserted: after.reduce((n, m) => n + m.inserted, 0),
      passes: new Set(after.map((m) => m.t)).size,
      bySchedule,
      perPassBefore: before.length ? before.reduce((n, m) => n + m.occurrences, 0) / before.length : null,
      withDatabase: fault.fault === 'db-clock-jump',
    });
  }
  return jumps;
}

function crasherSentence(c: Crasher, idx: HistoryIndex): string {
  // Two suspects in flight on one crashed process: the crash is blamed on one, though the rescuer counted it for both.
  const where = `pids ${fmtList(c.pids)} on ${fmtList(c.nodes)}${c.pids.length < c.crashes ? `; the rescuer counted ${c.crashes} crashes, the others shared with another suspect` : ''}`;
  const span = c.crashes > 1 ? ` between ${fmtT(c.firstCrashT)} and ${fmtT(c.lastCrashT)}` : ` at ${fmtT(c.firstCrashT)}`;
  const head = `Job ${c.jobId} (queue \`${c.queue}\`) crashed ${plural(c.crashes, 'worker process', 'worker processes')} (${where})${span}`;
  if (c.deadT !== null) {
    const reason = c.dead ? `: "${c.dead.reason}"` : '';
    return `${head} before it was dead-lettered at ${fmtT(c.deadT)} after ${plural(c.attempts, 'attempt')}${reason}.`;
  }
  const f = idx.jobs.get(c.jobId)!;
  return `${head} and was still not dead-lettered when the history ended (${plural(f.claims.length, 'claim')}).`;
}

function clockSentence(j: ClockJump): string {
  const req = j.requestedMs !== null ? fmtOffset(j.requestedMs) : 'by an unrecorded amount';
  const seen = j.observedMs !== null ? ` (its own events afterwards ran ${fmtOffset(Math.round(j.observedMs / 1000) * 1000)} from the harness clock)` : '';
  let s = `Node ${j.node}'s clock jumped ${req} at ${fmtT(j.t)}${j.withDatabase ? ' together with the database clock' : ''}${seen}`;
  if (j.occurrences === 0) return `${s}; it materialized no cron occurrences afterwards.`;
  const schedules = Object.entries(j.bySchedule).map(([id, n]) => `${id} ×${fmtCount(n)}`);
  s += `; it then materialized ${plural(j.occurrences, 'occurrence')} (${fmtCount(j.inserted)} inserted) in ${plural(j.passes, 'pass', 'passes')}, of ${plural(schedules.length, 'schedule')} (${fmtList(schedules)})`;
  if (j.perPassBefore !== null) s += `, against ${j.perPassBefore.toFixed(1)} per pass before the jump`;
  return `${s}.`;
}

/** Failure messages grouped with digits folded, so "job 12 timed out" and "job 13 timed out" count together. */
function failureFindings(input: ReportInput): string[] {
  const groups = new Map<string, { n: number; jobs: Set<number>; firstT: number; example: string }>();
  for (const e of input.history) {
    if (e.type !== 'job:failed') continue;
    const key = e.error.replace(/\d+/g, 'N');
    const g = groups.get(key) ?? { n: 0, jobs: new Set<number>(), firstT: e.t, example: e.error };
    g.n++;
    g.jobs.add(e.jobId);
    groups.set(key, g);
  }
  return [...groups.values()]
    .sort((a, b) => b.n - a.n)
    .slice(0, 3)
    .map((g) => `${plural(g.n, 'recorded failure')} across ${plural(g.jobs.size, 'job')} said "${g.example}" (first at ${fmtT(g.firstT)}).`);
}

export function deriveRootCause(input: ReportInput, idx: HistoryIndex): RootCause {
  const { crashers, unattributed, unexplained: lonely, bystanders } = findCrashers(input, idx);
  const clockJumps = findClockJumps(input, idx);
  const herd = findHerd(input, idx);
  const findings: string[] = crashers.slice(0, 5).map((c) => crasherSentence(c, idx));
  if (crashers.length > 5) findings.push(`${plural(crashers.length - 5, 'more job')} crashed worker processes: ${fmtList(crashers.slice(5).map((c) => c.jobId))}.`);
  for (const c of lonely.slice(0, 5)) {
    findings.push(`Process ${c.life.pid} on ${c.life.node} exited unexpectedly at ${fmtT(c.life.exit!.t)} with ${plural(c.jobIds.length, 'job')} in flight (${fmtList(c.jobIds)}); none of them turned up in another crash, so no job is blamed.`);
  }
  if (crashers.length > 0 && bystanders > 0) {
    findings.push(`${plural(bystanders, 'other job')} ${bystanders === 1 ? 'was' : 'were'} in flight on the crashed processes and went down with them; their leases expired and they ran again.`);
  }
  for (const j of clockJumps) findings.push(clockSentence(j));
  if (herd) {
    findings.push(herdSentence(herd));
    const both = compoundingSentence(herd, crashers, recoveryAfter(idx, herd.t, input.thresholds.oldestAgeSloMs), bystanders);
    if (both) findings.push(both);
  }
  const killed = new Map<number, EventOf<'fault:injected'>>();
  for (const f of idx.faults) if (typeof f.detail.pid === 'number') killed.set(f.detail.pid, f);
  const unexplained = unattributed.filter((p) => !killed.has(p.pid));
  for (const p of unattributed.filter((p) => killed.has(p.pid))) {
    const f = killed.get(p.pid)!;
    findings.push(`Process ${p.pid} on ${p.node} exited at ${fmtT(p.exit!.t)} after fault \`${f.fault}\` targeted it at ${fmtT(f.t)}, with no job in flight.`);
  }
  if (unexplained.length > 0) {
    findings.push(`${plural(unexplained.length, 'process', 'processes')} exited unexpectedly with no job recorded in flight and no fault aimed at them: pids ${fmtList(unexplained.map((p) => `${p.pid} (${p.node}, ${fmtT(p.exit!.t)})`))}.`);
  }
  findings.push(...failureFindings(input));
  // Faults not explained above: say what evidence the history holds that they took effect.
  const explained = new Set<EventOf<'fault:injected'>>([...killed.values()].filter((f) => unattributed.some((p) => p.pid === f.detail.pid)));
  const blamedIds = new Set(crashers.map((c) => c.jobId));
  for (const f of idx.faults) {
    if (explained.has(f) || isFaultEnd(f) || CLOCK_FAULT.test(f.fault)) continue;
    const jobIds = [f.detail.jobId, ...(Array.isArray(f.detail.jobIds) ? f.detail.jobIds : [])].filter((id): id is number => typeof id === 'number');
    if (jobIds.some((id) => blamedIds.has(id))) continue;
    const ev = input.history.filter((e): e is EventOf<'fault:evidence'> => e.type === 'fault:evidence' && e.fault === f.fault && e.t >= f.t);
    const detail = Object.keys(f.detail).length ? ` (${fmtDetail(f.detail)})` : '';
    findings.push(
      ev.length === 0
        ? `Fault \`${f.fault}\` was injected at ${fmtT(f.t)}${detail}, but no evidence that it took effect was recorded.`
        : `Fault \`${f.fault}\` was injected at ${fmtT(f.t)}${detail}; ${plural(ev.length, 'evidence record')} ${ev.length === 1 ? 'shows' : 'show'} it took effect, first at ${fmtT(ev[0].t)}: ${fmtDetail(ev[0].detail)}.`,
    );
  }
  if (findings.length === 0) findings.push('Nothing in the history points to a cause: no faults, crashes, clock jumps, herds or job failures were recorded.');
  return { crashers, clockJumps, herd, findings };
}
