import type { Rng } from '../../engine/rng.ts';
import { findDstTransition } from './dst-transition.ts';
import { DEFAULT_FAILOVER_LAG_S, defaultTarget, parseNodeRef, validateFaults, type FaultContext, type FaultName, type FaultSpec } from './spec.ts';

export type { FaultContext, FaultName, FaultSpec, NodeRef } from './spec.ts';
export { FAULT_NAMES, validateFaults } from './spec.ts';

/** A process a fault lands on. */
export interface FaultTarget {
  role: 'worker' | 'scheduler';
  index: number;
}

/** One concrete thing the nemesis does, at one time. */
export interface FaultAction {
  /** Position in the expanded plan, from 0. */
  seq: number;
  /** When, in ms after the load starts. */
  atMs: number;
  fault: FaultName;
  /** Index of the timeline entry this came from (`scenario.faults[source]`). */
  source: number;
  /** The processes it lands on; empty for faults of the database or the shared dependency. */
  targets: FaultTarget[];
  /** The fault's own parameters, as declared (timing fields removed). */
  params: Record<string, unknown>;
  /** For faults that last (stop, outage, holds, restart): when they end, in ms after the load starts. */
  untilMs?: number;
  /** For `dst`: the real transition, and the node-clock reading to set so the node crosses it `leadS` later. */
  dst?: {
    transitionAtMs: number;
    setClockToMs: number;
    offsetBeforeMs: number;
    offsetAfterMs: number;
    /** `downS` in ms: how long before `setClockToMs` every scheduler stopped (the schedules' progress mark); undefined: the node's catch-up window. */
    downMs?: number;
  };
}

/** Year used for a `dst` fault that names none: fixed, so a scenario replays the same transition in any year it is run. */
export const DEFAULT_DST_YEAR = 2026;
/** How long before the transition a `dst` fault sets the node's clock, by default. */
export const DEFAULT_DST_LEAD_S = 60;

/**
 * Expands a fault timeline into concrete, timed actions, deterministically:
 * "worker-kill every 5±2 s from 10 s to 40 s" becomes a list of times with
 * the worker each kill lands on. Each timeline entry draws from its own fork
 * of the seed, so adding a fault does not move the others. Validates first
 * (ValidationError naming the field). Actions are sorted by time, then by
 * timeline order.
 */
export function planFaults(faults: readonly FaultSpec[], ctx: FaultContext, rng: Rng, field = 'faults'): FaultAction[] {
  validateFaults(faults, ctx, field);
  const actions: Omit<FaultAction, 'seq'>[] = [];
  faults.forEach((spec, source) => {
    const r = rng.fork(`fault[${source}]:${spec.fault}`);
    for (const atMs of occurrenceTimes(spec, ctx.durationS, r)) {
      actions.push(concrete(spec, source, atMs, ctx, r));
    }
  });
  return actions
    .sort((a, b) => a.atMs - b.atMs || a.source - b.source)
    .map((a, seq) => ({ seq, ...a }));
}

/** atS, then every everyS ± jitterS (a fresh draw per gap) while within untilS (default: the run's duration). */
export function occurrenceTimes(spec: Pick<FaultSpec, 'atS' | 'everyS' | 'jitterS' | 'untilS'>, durationS: number, rng: Rng): number[] {
  const times = [spec.atS * 1000];
  if (spec.everyS === undefined) return times;
  const untilMs = (spec.untilS ?? durationS) * 1000;
  const jitterMs = (spec.jitterS ?? 0) * 1000;
  for (let t = times[0]; ; ) {
    t += spec.everyS * 1000 + (jitterMs ? (rng.next() * 2 - 1) * jitterMs : 0);
    if (t > untilMs) return times;
    times.push(Math.round(t));
  }
}

const DURATION_PARAM: Partial<Record<FaultName, string>> = {
  'worker-stop': 'forS',
  'clock-rate': 'forS',
  'pool-exhaust': 'forS',
  'xmin-hold': 'forS',
  'dependency-outage': 'forS',
  'queue-pause': 'forS',
  'schedule-pause': 'forS',
  'db-restart': 'downS',
  partition: 'forS',
  latency: 'forS',
  bandwidth: 'forS',
  'db-pause': 'forS',
  'connections-exhausted': 'forS',
  'read-only': 'forS',
  'lock-jobs-table': 'forS',
};

function concrete(spec: FaultSpec, source: number, atMs: number, ctx: FaultContext, rng: Rng): Omit<FaultAction, 'seq'> {
  const { atS: _a, everyS: _e, jitterS: _j, untilS: _u, fault, ...params } = spec;
  const action: Omit<FaultAction, 'seq'> = { atMs, fault, source, targets: resolveTargets(spec, ctx, rng), params };
  const durKey = DURATION_PARAM[fault];
  const durS = durKey ? (params as Record<string, unknown>)[durKey] : undefined;
  if (typeof durS === 'number') action.untilMs = atMs + durS * 1000;
  if (spec.fault === 'failover') action.untilMs = atMs + (spec.lagS ?? DEFAULT_FAILOVER_LAG_S) * 1000;
  if (spec.fault === 'dst') {
    const tr = findDstTransition(spec.zone, spec.year ?? DEFAULT_DST_YEAR, spec.transition);
    action.dst = {
      transitionAtMs: tr.atMs,
      setClockToMs: tr.atMs - (spec.leadS ?? DEFAULT_DST_LEAD_S) * 1000,
      offsetBeforeMs: tr.offsetBeforeMs,
      offsetAfterMs: tr.offsetAfterMs,
      ...(spec.downS !== undefined ? { downMs: spec.downS * 1000 } : {}),
    };
  }
  return action;
}

function resolveTargets(spec: FaultSpec, ctx: FaultContext, rng: Rng): FaultTarget[] {
  // A commit cut with no target arms every worker: the first whose transaction commits at the point takes it.
  if (spec.fault === 'reset-after-commit') {
    if (spec.point === 'enqueue') return [];
    if (!spec.target) return Array.from({ length: ctx.workers }, (_, index) => ({ role: 'worker' as const, index }));
  }
  if (!('target' in spec) && !TARGETED.has(spec.fault)) return [];
  const ref = parseNodeRef(('target' in spec && spec.target) || defaultTarget(spec.fault))!;
  const n = ref.role === 'worker' ? ctx.workers : ctx.schedulers;
  if (ref.index === 'all') return Array.from({ length: n }, (_, index) => ({ role: ref.role, index }));
  return [{ role: ref.role, index: ref.index === 'random' ? rng.int(0, n - 1) : ref.index }];
}

const TARGETED = new Set<FaultName>(['worker-kill', 'worker-stop', 'worker-restart', 'clock-skew', 'clock-jump', 'clock-rate', 'dst', 'partition', 'latency', 'bandwidth', 'reset']);
