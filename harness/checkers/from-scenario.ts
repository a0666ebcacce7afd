import type { Scenario } from '../scenario.ts';
import { engineSettingsFor, enabledCheckers } from '../scenario.ts';
import { resolveBounds, type CheckerBounds, type CheckerName } from './index.ts';

/** What the runner passes in that only the run knows (the occurrences the schedules should have produced). */
export interface RunFacts {
  /** `cron:<schedule>:<instant>` keys the run must (and may) have produced, from the harness's cron oracle over the run's real times. */
  expectedCronKeys?: string[];
  allowedCronKeys?: string[];
  /**
   * History t (ms since the run started) at which the load started. The scenario's incident window
   * is in seconds after the load starts; setup before it (workers starting, preloaded work) moves it.
   * Default 0.
   */
  loadStartT?: number;
}

/**
 * The checkers a scenario turns on, and the bounds each is held to: first
 * what follows from the scenario itself (its SLO threshold, incident window,
 * lease, crash-loop limit, backoff base, declared faults), then the bounds the
 * scenario wrote for that checker, which win.
 */
export function checkerPlan(s: Scenario, facts: RunFacts = {}): { names: CheckerName[]; bounds: CheckerBounds } {
  const workers = Array.from({ length: s.workers }, (_, i) => engineSettingsFor(s, i));
  const min = (pick: (e: (typeof workers)[number]) => number) => Math.min(...workers.map(pick));
  const loadStartT = facts.loadStartT ?? 0;
  const rateLimited = Object.entries(s.queueLimits).find(([, l]) => l.maxStartsPerSecond !== undefined);
  const perKeyCapped = Object.values(s.queueLimits).find((l) => l.maxInFlightPerKey !== undefined);
  const weighted = Object.entries(s.keyWeights).find(([, w]) => Object.keys(w).length >= 2);
  const incident = s.incident ? { fromMs: loadStartT + s.incident.fromS * 1000, toMs: loadStartT + s.incident.toS * 1000 } : null;
  const derived: CheckerBounds = {
    'no-concurrent-claim': { leaseMs: min((e) => e.leaseMs) },
    // Poison kills its worker each attempt: the crash-loop verdict must retire it, well before the attempt budget.
    'dead-letter-routing': { maxAttempts: Math.max(...workers.map((e) => Math.min(e.maxCrashes, e.maxAttempts))) },
    'oldest-age-slo': { sloMs: s.thresholds.oldestAgeSloMs, incident },
    'fleet-recovers': { sloMs: s.thresholds.oldestAgeSloMs, incident },
    // Full jitter spreads a cohort's first retry over the backoff base; a bucket a fifth of it tells jitter from lockstep.
    'retry-spread': { bucketMs: Math.max(1, Math.min(1_000, Math.floor(min((e) => e.backoffBaseMs) / 5))) },
    'recovers-after-heal': { rescueIntervalMs: Math.max(...workers.map((e) => e.rescueIntervalMs)) },
    'faults-exercised': { declared: [...new Set(s.faults.map((f) => f.fault))] },
    // The fastest poll of the fleet: the one that could start jobs in time without any wake-up.
    'prompt-wakeup': { pollMs: min((e) => e.pollMs) },
    // Every worker must report the limit the scenario gave it; 0 (each judged by its own report) when none is set or workers differ.
    // A worker's default claim-ahead buffer is its concurrency (scenarios leave claimAhead unset).
    'claim-ahead-paced': { concurrency: s.concurrency },
    'handler-timeout': { timeoutMs: new Set(workers.map((e) => e.timeoutMs)).size === 1 ? (workers[0]?.timeoutMs ?? 0) : 0 },
    // The start-rate check judges the scenario's (first) rate-limited queue against its declared rate.
    ...(rateLimited ? { 'start-rate': { queue: rateLimited[0], perSecond: rateLimited[1].maxStartsPerSecond } } : {}),
    // per-key-limit judges the scenario's (first) capped queue against its declared cap.
    ...(perKeyCapped ? { 'per-key-limit': { maxInFlightPerKey: perKeyCapped.maxInFlightPerKey } } : {}),
    // weighted-share judges the scenario's (first) queue with two or more weighted keys, by those weights.
    ...(weighted ? { 'weighted-share': { queue: weighted[0], weights: Object.entries(weighted[1]).map(([k, w]) => `${k}:${w}`) } } : {}),
    ...(s.archiver ? { 'archive-once': { archiveAfterMs: s.archiver.archiveAfterMs }, 'archive-retention': { intervalMs: s.archiver.intervalMs } } : {}),
    ...(s.relays?.retentionMs ? { 'prune-retention': { retentionMs: s.relays.retentionMs } } : {}),
    ...(facts.expectedCronKeys
      ? { 'one-job-per-cron-occurrence': { expectedKeys: facts.expectedCronKeys, allowedKeys: facts.allowedCronKeys ?? [] } }
      : {}),
  };
  // A timeline with no fault leaves faults-exercised nothing to judge, and a check that judged nothing never
  // passes (runCheckers): planned anyway, it would make every fault-free run inconclusive.
  const names = enabledCheckers(s).filter((n) => n !== 'faults-exercised' || s.faults.length > 0);
  const bounds: CheckerBounds = {};
  for (const name of names) {
    const own = s.checkers[name];
    const given = { ...(derived[name] ?? {}), ...(typeof own === 'object' ? own : {}) };
    (bounds as Record<string, unknown>)[name] = resolveBounds(name, given, `scenario.checkers.${name}`);
  }
  return { names, bounds };
}
