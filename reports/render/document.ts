import { judgedText, type InvariantResult } from '../../harness/history.ts';
import { toEpochMs } from './input.ts';
import type { Analysis } from './analysis.ts';
import type { RenderedChart } from './charts.ts';
import { detectionText } from './timeline.ts';
import { pageBlocks } from './pages.ts';
import { ledgerTable, lostWritesTable, type FailoverAccount } from './write-ledger.ts';
import { fmtCount, fmtDuration, fmtList, fmtRate, fmtT, plural } from './format.ts';

/**
 * The postmortem as a list of blocks, built once and written twice: as
 * markdown (report.md) and as HTML (report.html). Text may hold `code`
 * spans in backticks; the writers escape everything else.
 */
export type Block =
  | { kind: 'h1'; text: string }
  | { kind: 'h2'; text: string }
  | { kind: 'p'; text: string }
  | { kind: 'ul'; items: string[] }
  | { kind: 'table'; header: string[]; rows: string[][]; numeric?: boolean[] }
  | { kind: 'chart'; chart: RenderedChart };

export const SECTION_TITLES = ['Summary', 'Impact', 'Charts', 'Timeline', 'Detection', 'Root cause', 'Mitigation', 'Invariants', 'Action items'] as const;

/** A figure with no lane above zero: none was sampled, or every sample read zero (a quiet run), which are not the same. */
function noPeak(samples: number, quiet: string): string {
  return samples === 0 ? 'no samples recorded' : `0 in every lane over ${plural(samples, 'sample')} (${quiet} when sampled)`;
}

/** The failover's part of the acknowledged-writes section: its facts, its accounting by kind, and every lost write by id. */
function failoverBlocks(f: FailoverAccount): Block[] {
  return [
    { kind: 'p', text: 'Failover: every write the run acknowledged, against the promoted primary.' },
    { kind: 'ul', items: f.facts },
    { kind: 'table', header: ['Write', 'Acknowledged', 'Kept', 'Lost (cause)', 'Duplicated (cause)'], rows: ledgerTable(f), numeric: [false, true, true, false, false] },
    ...(f.lost.length
      ? [{ kind: 'table', header: ['Job', 'Lost write', 'Acknowledged', 'In the lag window', 'Cause'], rows: lostWritesTable(f), numeric: [false, false, false, false, false] } as Block]
      : [{ kind: 'p', text: 'No acknowledged write was lost.' } as Block]),
  ];
}

function passCell(pass: InvariantResult['pass']): string {
  return pass === true ? 'pass' : pass === false ? 'FAIL' : pass === 'not-promised' ? 'not promised' : 'unknown';
}

function summary(a: Analysis): string {
  const { input, impact, detection, breaches, rootCause } = a;
  const dur = toEpochMs(input.finishedAt, 'finishedAt') - toEpochMs(input.startedAt, 'startedAt');
  const parts: string[] = [];
  parts.push(`Verdict: ${input.verdict.toUpperCase()}${input.interrupted ? ' (run interrupted)' : ''}.`);
  parts.push(`Over ${fmtDuration(dur)} the run offered ${fmtRate(input.offeredRate)} and achieved ${fmtRate(input.achievedRate)}.`);
  if (detection.trigger) parts.push(`The first fault, \`${detection.trigger.fault}\`, landed at ${fmtT(detection.trigger.t)}.`);
  const first = detection.firstCrossings[0];
  if (first) parts.push(`\`${first.signal}\` was the first alert to fire, at ${fmtT(first.t)}.`);
  if (impact.maxOldestAge.queue) parts.push(`Oldest-unclaimed-age peaked at ${fmtDuration(impact.maxOldestAge.ms)} in lane \`${impact.maxOldestAge.queue}\`.`);
  if (rootCause.crashers[0]) parts.push(`Job ${rootCause.crashers[0].jobId} crashed ${plural(rootCause.crashers[0].crashes, 'worker process', 'worker processes')}.`);
  if (impact.deadLettered.count) parts.push(`${plural(impact.deadLettered.count, 'job')} dead-lettered.`);
  const last = breaches[breaches.length - 1];
  // Back under the SLO is not recovered while a poison still kills workers: say so.
  const lastCrashT = Math.max(...rootCause.crashers.map((c) => c.lastCrashT));
  if (last && last.toT !== null && lastCrashT > last.toT) parts.push(`Oldest-unclaimed-age was back under the SLO at ${fmtT(last.toT)}, but the crash loop went on: the last worker crash was at ${fmtT(lastCrashT)}.`);
  else if (last) parts.push(last.toT !== null ? `Recovered under the SLO at ${fmtT(last.toT)}.` : 'Not recovered when the history ended.');
  const failed = input.invariants.filter((r) => r.pass === false).map((r) => `\`${r.name}\``);
  const unknown = input.invariants.filter((r) => r.pass === 'unknown').map((r) => `\`${r.name}\``);
  parts.push(
    failed.length === 0
      ? `All ${input.invariants.length} invariants held${unknown.length ? ` or were undecided (${fmtList(unknown)})` : ''}.`
      : `${failed.length} of ${input.invariants.length} invariants failed: ${fmtList(failed)}.`,
  );
  return parts.join(' ');
}

export function buildDocument(a: Analysis, charts: RenderedChart[]): Block[] {
  const { input, impact } = a;
  const L = impact.latency;
  const slo = fmtDuration(input.thresholds.oldestAgeSloMs);
  const blocks: Block[] = [
    { kind: 'h1', text: `Incident report: ${input.scenario.name}` },
    { kind: 'h2', text: 'Summary' },
    { kind: 'p', text: summary(a) },
    {
      kind: 'table',
      header: ['Run', ''],
      rows: [
        ['Scenario', `\`${input.scenario.name}\`: ${input.scenario.description}`],
        ['Seed', `\`${String(input.seed)}\``],
        ['Replay', `\`${input.replayCommand}\``],
        ['Started', new Date(toEpochMs(input.startedAt, 'startedAt')).toISOString()],
        ['Finished', new Date(toEpochMs(input.finishedAt, 'finishedAt')).toISOString() + (input.interrupted ? ' (interrupted)' : '')],
        ['Offered / achieved', `${fmtRate(input.offeredRate)} / ${fmtRate(input.achievedRate)}`],
      ],
    },
    { kind: 'h2', text: 'Impact' },
    {
      kind: 'ul',
      items: [
        `Jobs delayed: ${fmtCount(impact.delayedJobs)} of ${fmtCount(L.jobs)} started more than the ${slo} SLO after they were due. Due-to-start latency p50 ${fmtDuration(L.p50Ms)}, p90 ${fmtDuration(L.p90Ms)}, p99 ${fmtDuration(L.p99Ms)}, max ${fmtDuration(L.maxMs)}${L.maxJobId !== null ? ` (job ${L.maxJobId})` : ''}.`,
        impact.maxOldestAge.queue
          ? `Max oldest-unclaimed-age: ${fmtDuration(impact.maxOldestAge.ms)} in lane \`${impact.maxOldestAge.queue}\` at ${fmtT(impact.maxOldestAge.t!)} (SLO ${slo}).`
          : `Max oldest-unclaimed-age: ${noPeak(impact.samples, 'no due job waited unclaimed')}.`,
        impact.peakDepth.queue
          ? `Peak queue depth: ${fmtCount(impact.peakDepth.depth)} pending in lane \`${impact.peakDepth.queue}\` at ${fmtT(impact.peakDepth.t!)}.`
          : `Peak queue depth: ${noPeak(impact.samples, 'no lane had a pending job')}.`,
        `Jobs dead-lettered: ${fmtCount(impact.deadLettered.count)}${impact.deadLettered.count ? ` (${fmtList(impact.deadLettered.jobIds.map((id) => `job ${id}`))})` : ''}; ${plural(impact.deadLettered.finalRows, 'dead-letter row')} at the end.`,
        `Duplicate deliveries absorbed: ${fmtCount(impact.duplicatesAbsorbed.count)} of the ${plural(impact.startedMoreThanOnce, 'job')} started more than once still had exactly one side effect${impact.duplicatedEffects.count ? `; ${plural(impact.duplicatedEffects.count, 'job')} had more than one` : ''}.`,
        `Jobs enqueued: ${fmtCount(impact.jobsEnqueued)}; completed: ${fmtCount(impact.jobsCompleted)}.`,
      ],
    },
    { kind: 'h2', text: 'Charts' },
    { kind: 'p', text: 'Red rules mark fault injections, orange dashed rules alert crossings (▲ up, ▼ down); the shaded band is the incident window.' },
    ...charts.map((chart): Block => ({ kind: 'chart', chart })),
    { kind: 'h2', text: 'Timeline' },
    a.timeline.length
      ? { kind: 'table', header: ['t (s)', 'What', 'Event'], rows: a.timeline.map((e) => [(e.t / 1000).toFixed(1), e.kind, e.text]), numeric: [true, false, false] }
      : { kind: 'p', text: 'Nothing was recorded.' },
    { kind: 'h2', text: 'Detection' },
    ...detectionText(a.detection, a.breaches).map((text): Block => ({ kind: 'p', text })),
    ...pageBlocks(input.history),
    { kind: 'h2', text: 'Root cause' },
    { kind: 'ul', items: a.rootCause.findings },
    { kind: 'h2', text: 'Mitigation' },
    { kind: 'ul', items: a.mitigation },
    ...(a.writes
      ? ([
          { kind: 'h2', text: 'Acknowledged writes across the faults' },
          {
            kind: 'p',
            text: `Every write acknowledged from ${fmtT(a.writes.fromT)} (the first link or database-host fault) to ${fmtT(a.writes.toT)} (5 s after the last ended), against the final state.`,
          },
          { kind: 'table', header: ['Write', 'Acknowledged', 'Kept', 'Lost (cause)', 'Duplicated (cause)'], rows: ledgerTable(a.writes), numeric: [false, true, true, false, false] },
          ...(a.writes.cuts.length ? [{ kind: 'ul', items: a.writes.cuts } as Block] : []),
          ...(a.writes.failover ? failoverBlocks(a.writes.failover) : []),
        ] as Block[])
      : []),
    { kind: 'h2', text: 'Invariants' },
    input.invariants.length
      ? {
          kind: 'table',
          header: ['Invariant', 'Result', 'Measured', 'Judged', 'Bound'],
          rows: input.invariants.map((r) => [`\`${r.name}\``, passCell(r.pass), r.figure, judgedText(r.judged), r.bound]),
        }
      : { kind: 'p', text: 'No invariants were checked.' },
    { kind: 'h2', text: 'Action items' },
    { kind: 'ul', items: a.actions },
  ];
  return blocks;
}
