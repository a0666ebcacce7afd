import type { EventOf } from '../../harness/history.ts';
import type { ReportInput } from './input.ts';
import type { HistoryIndex } from './job-index.ts';
import { isFaultEnd, type RootCause } from './root-cause.ts';
import { fmtDetail, fmtDuration, fmtList, fmtT, plural } from './format.ts';

/** One row of the incident timeline. */
export interface TimelineEntry {
  t: number;
  kind: 'phase' | 'fault' | 'evidence' | 'alert' | 'crash' | 'cron' | 'mitigation' | 'breach' | 'recovery';
  text: string;
}

/** A stretch during which some lane's oldest-unclaimed-age was over the SLO. */
export interface Breach {
  fromT: number;
  /** First sample back under the SLO in every lane; null if the history ended first. */
  toT: number | null;
  worstQueue: string;
  worstMs: number;
}

export interface Detection {
  trigger: EventOf<'fault:injected'> | null;
  /** Each signal's first upward crossing, earliest first. */
  firstCrossings: { signal: string; t: number; value: number; threshold: number; afterTriggerMs: number | null }[];
}

const MAX_CRASH_ROWS = 10;
const MAX_ALERT_ROWS = 20;
const MAX_EVIDENCE_PER_FAULT = 2;

/** Stretches over the SLO, from the samples: a breach starts at the first sample over it and ends at the first sample with every lane back under. */
export function findBreaches(idx: HistoryIndex, sloMs: number): Breach[] {
  const out: Breach[] = [];
  let cur: Breach | null = null;
  for (const s of idx.samples) {
    const entries = Object.entries(s.oldestUnclaimedAgeMs);
    const [worstQueue, worstMs] = entries.reduce<[string, number]>((w, e) => (e[1] > w[1] ? e : w), ['', -Infinity]);
    if (worstMs > sloMs) {
      if (!cur) {
        cur = { fromT: s.t, toT: null, worstQueue, worstMs };
        out.push(cur);
      } else if (worstMs > cur.worstMs) {
        cur.worstMs = worstMs;
        cur.worstQueue = worstQueue;
      }
    } else if (cur) {
      cur.toT = s.t;
      cur = null;
    }
  }
  return out;
}

export function detect(idx: HistoryIndex): Detection {
  const trigger = idx.faults.find((f) => !isFaultEnd(f)) ?? null;
  const seen = new Set<string>();
  const firstCrossings: Detection['firstCrossings'] = [];
  for (const a of idx.alerts) {
    if (a.direction !== 'up' || seen.has(a.signal)) continue;
    seen.add(a.signal);
    firstCrossings.push({ signal: a.signal, t: a.t, value: a.value, threshold: a.threshold, afterTriggerMs: trigger ? a.t - trigger.t : null });
  }
  return { trigger, firstCrossings };
}

/** The incident window: the caller's, else from the first fault or breach to the last recovery (or the end of the history). */
export function incidentWindow(input: ReportInput, idx: HistoryIndex, breaches: Breach[]): { fromT: number; toT: number } | null {
  if (input.incidentWindow) return input.incidentWindow;
  const starts = [idx.faults.find((f) => !isFaultEnd(f))?.t, breaches[0]?.fromT].filter((t): t is number => t !== undefined);
  if (starts.length === 0) return null;
  const last = breaches[breaches.length - 1];
  const toT = last ? (last.toT ?? idx.endT) : Math.max(...idx.faults.map((f) => f.t));
  return { fromT: Math.min(...starts), toT: Math.max(toT, Math.min(...starts)) };
}

export function buildTimeline(input: ReportInput, rc: RootCause, breaches: Breach[]): TimelineEntry[] {
  const rows: TimelineEntry[] = [];
  const evidenceCount = new Map<string, number>();
  const crashes: TimelineEntry[] = [];
  const alerts: TimelineEntry[] = [];
  for (const e of input.history) {
    switch (e.type) {
      case 'run:phase':
        rows.push({ t: e.t, kind: 'phase', text: `Run phase: ${e.phase}.` });
        break;
      case 'fault:injected': {
        const { phase, ...rest } = e.detail;
        const detail = Object.keys(rest).length ? ` (${fmtDetail(rest)})` : '';
        rows.push({ t: e.t, kind: 'fault', text: phase === 'end' ? `Fault ended: \`${e.fault}\`${detail}.` : `Fault injected: \`${e.fault}\`${detail}.` });
        break;
      }
      case 'fault:evidence': {
        const n = (evidenceCount.get(e.fault) ?? 0) + 1;
        evidenceCount.set(e.fault, n);
        if (n <= MAX_EVIDENCE_PER_FAULT) rows.push({ t: e.t, kind: 'evidence', text: `Fault \`${e.fault}\` took effect: ${fmtDetail(e.detail)}.` });
        break;
      }
      case 'alert:crossed':
        alerts.push({
          t: e.t,
          kind: 'alert',
          text: `Alert \`${e.signal}\` crossed ${e.direction === 'up' ? 'above' : 'back below'} its threshold (${crossingValue(e)}).`,
        });
        break;
      case 'process:exited':
        if (!e.expected) {
          const cause = e.signal ? `signal ${e.signal}` : `exit code ${e.code}`;
          crashes.push({ t: e.t, kind: 'crash', text: `${e.role.charAt(0).toUpperCase()}${e.role.slice(1)} process ${e.pid} on ${e.node} exited unexpectedly (${cause}).` });
        }
        break;
      default:
        break;
    }
  }
  rows.push(...alerts.slice(0, MAX_ALERT_ROWS), ...crashes.slice(0, MAX_CRASH_ROWS));
  if (alerts.length > MAX_ALERT_ROWS) rows.push({ t: alerts[MAX_ALERT_ROWS].t, kind: 'alert', text: `…and ${plural(alerts.length - MAX_ALERT_ROWS, 'more alert crossing')} (see report.json history).` });
  if (crashes.length > MAX_CRASH_ROWS) rows.push({ t: crashes[MAX_CRASH_ROWS].t, kind: 'crash', text: `…and ${plural(crashes.length - MAX_CRASH_ROWS, 'more unexpected exit')}.` });
  for (const j of rc.clockJumps) {
    const mine = input.history.filter((e): e is EventOf<'cron:materialized'> => e.type === 'cron:materialized' && (e.nodeId === j.node || e.node === j.node) && e.t >= j.t);
    const first = mine.filter((e) => e.t === mine[0]?.t);
    const n = first.reduce((sum, e) => sum + e.occurrences, 0);
    if (n > 0) rows.push({ t: first[0].t, kind: 'cron', text: `${j.node}'s first materialization pass after its clock jump: ${plural(n, 'cron occurrence')} (${first.reduce((sum, e) => sum + e.inserted, 0)} inserted).` });
  }
  for (const c of rc.crashers) {
    if (c.deadT !== null) {
      rows.push({ t: c.deadT, kind: 'mitigation', text: `Mitigation: job ${c.jobId} dead-lettered after crashing ${plural(c.crashes, 'process', 'processes')}, ${fmtDuration(c.deadT - c.firstCrashT)} after its first crash.` });
    }
  }
  if (rc.crashers.length === 0) {
    const firstDead = input.history.find((e): e is EventOf<'job:dead'> => e.type === 'job:dead');
    if (firstDead) rows.push({ t: firstDead.t, kind: 'mitigation', text: `First job dead-lettered: job ${firstDead.jobId} (queue \`${firstDead.queue}\`) after ${plural(firstDead.attempt, 'attempt')}: "${firstDead.reason}".` });
  }
  for (const b of breaches.slice(0, 5)) {
    rows.push({ t: b.fromT, kind: 'breach', text: `Oldest-unclaimed-age went over the ${fmtDuration(input.thresholds.oldestAgeSloMs)} SLO (lane \`${b.worstQueue}\`, peaking at ${fmtDuration(b.worstMs)}).` });
    if (b.toT !== null) rows.push({ t: b.toT, kind: 'recovery', text: `Recovery: oldest-unclaimed-age back under the SLO in every lane, ${fmtDuration(b.toT - b.fromT)} after it went over.` });
  }
  const order: Record<TimelineEntry['kind'], number> = { phase: 0, fault: 1, evidence: 2, cron: 3, crash: 4, breach: 5, alert: 6, mitigation: 7, recovery: 8 };
  return rows.sort((a, b) => a.t - b.t || order[a.kind] - order[b.kind]);
}

/** Prose for the detection section. */
export function detectionText(d: Detection, breaches: Breach[]): string[] {
  if (d.firstCrossings.length === 0) {
    const gap = breaches.length ? ` although oldest-unclaimed-age was over the SLO from ${fmtT(breaches[0].fromT)}` : '';
    return [`No alert signal crossed its threshold${gap}.`];
  }
  const first = d.firstCrossings[0];
  const out: string[] = [];
  if (d.trigger) {
    const rel = first.afterTriggerMs! >= 0 ? `${fmtDuration(first.afterTriggerMs)} after` : `${fmtDuration(-first.afterTriggerMs!)} before`;
    out.push(`\`${first.signal}\` fired first, at ${fmtT(first.t)} (${crossingValue(first)}), ${rel} the first fault (\`${d.trigger.fault}\` at ${fmtT(d.trigger.t)}): the time to detection.`);
  } else {
    out.push(`\`${first.signal}\` fired first, at ${fmtT(first.t)} (${crossingValue(first)}); no fault was injected in this run.`);
  }
  if (d.firstCrossings.length > 1) {
    const after = (c: Detection['firstCrossings'][number]) => (c.afterTriggerMs !== null ? `, ${fmtDuration(c.afterTriggerMs)} after the first fault` : '');
    out.push(`Then: ${fmtList(d.firstCrossings.slice(1).map((c) => `\`${c.signal}\` at ${fmtT(c.t)} (${crossingValue(c)}${after(c)})`))}.`);
  }
  return out;
}

/** A crossing's value against its threshold, in the signal's unit: durations for ages, counts for depths. */
function crossingValue(c: { signal: string; value: number; threshold: number }): string {
  const f = /age/.test(c.signal) ? (v: number) => fmtDuration(v) : (v: number) => String(Math.round(v * 1000) / 1000);
  return `${f(c.value)} against a threshold of ${f(c.threshold)}`;
}
