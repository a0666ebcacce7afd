import type { Medians } from './report.ts';
import { best, verdict, type TargetVerdict } from './stats.ts';
import { configById } from './systems/configs.ts';
import type { ScaleResult } from './workloads/scale.ts';

/** One issue's targets as this run judged them. */
export interface TargetSection {
  issue: 10 | 15;
  verdicts: TargetVerdict[];
}

/** A drain's key in the results: config, process count and size, e.g. `stampede@2/100000`. */
export const drainKey = (id: string, procs: number, jobs: number) => `${id}@${procs}/${jobs}`;

export function parseDrainKey(key: string): { id: string; procs: number; jobs: number } {
  const m = /^(.+)@(\d+)\/(\d+)$/.exec(key);
  if (!m) throw new Error(`drain key "${key}": expected <config>@<procs>/<jobs>`);
  return { id: m[1], procs: Number(m[2]), jobs: Number(m[3]) };
}

const isStampede = (id: string) => configById(id).family === 'stampede';
export const fmtRows = (n: number) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n));
const procsText = (p: number) => `${p} process${p > 1 ? 'es' : ''}`;

/** Issue 10's targets against this run's figures; each says by how much it was missed. Pure. */
export function checkIssue10Targets(m: Medians, scale: ScaleResult | null): TargetVerdict[] {
  const out: TargetVerdict[] = [];
  const drains = Object.entries(m.drain).map(([k, v]) => [k, v.drainJobsPerSec] as [string, number | null]);
  const ours = best(drains.filter(([k]) => isStampede(parseDrainKey(k).id)), 'max');
  const peer = best(drains.filter(([k]) => !isStampede(parseDrainKey(k).id)), 'max');
  out.push(
    verdict('drain >= 1.2x best peer', ours?.[1] ?? null, peer ? peer[1] * 1.2 : null, 'higher', ours && peer ? `stampede ${ours[0]} vs ${peer[0]}` : ''),
  );
  const lat = Object.entries(m.latency);
  const ourLat = lat.find(([k]) => k === 'stampede')?.[1];
  const peerP99 = best(lat.filter(([k]) => !isStampede(k)).map(([k, v]) => [k, v.p99]), 'min');
  out.push(verdict('latency p99 <= best peer p99', ourLat?.p99 ?? null, peerP99?.[1] ?? null, 'lower', peerP99 ? `best peer ${peerP99[0]}` : ''));
  out.push(verdict('latency max <= 50 ms', ourLat?.max ?? null, 50, 'lower'));
  if (scale && scale.points.length >= 2) {
    const first = scale.points[0];
    const last = scale.points[scale.points.length - 1];
    out.push(
      verdict(`claim p50 at ${fmtRows(last.finishedRows)} finished <= 1.25x at ${fmtRows(first.finishedRows)}`, last.claimP50Ms, first.claimP50Ms * 1.25, 'lower'),
    );
    out.push(verdict('claim plan uses indexes only (no Seq Scan)', scale.indexOnly ? 1 : 0, 1, 'higher'));
  }
  const rss = Object.entries(m.drain).map(([k, v]) => [k, v.peakRssMiB] as [string, number | null]);
  const ourRss = best(rss.filter(([k]) => isStampede(parseDrainKey(k).id)), 'max');
  const peerRss = best(rss.filter(([k]) => !isStampede(parseDrainKey(k).id)), 'min');
  out.push(verdict('worker peak RSS <= the leanest peer', ourRss?.[1] ?? null, peerRss?.[1] ?? null, 'lower', peerRss ? `largest stampede vs ${peerRss[0]}` : ''));
  return out;
}

const DRAIN_PEER = 'graphile-batched';

/**
 * Issue 15's "Done when", row by row. Drains: in each drain row (size x
 * processes) stampede's best config >= 1.2x graphile-worker batched.
 * Latency: stampede's defaults against the best peer at the same
 * concurrency (10), and max <= 50 ms. RSS: in every row that measured it
 * (each drain, the latency run), stampede's largest worker against that
 * row's leanest peer; the verdict is the worst row. Pure.
 */
export function checkIssue15Targets(m: Medians): TargetVerdict[] {
  const out: TargetVerdict[] = [];
  const rows = new Map<string, { procs: number; jobs: number; ids: Map<string, { jobsPerSec: number | null; rss: number | null }> }>();
  for (const [key, v] of Object.entries(m.drain)) {
    const { id, procs, jobs } = parseDrainKey(key);
    const row = rows.get(`${jobs}@${procs}`) ?? { procs, jobs, ids: new Map() };
    row.ids.set(id, { jobsPerSec: v.drainJobsPerSec, rss: v.peakRssMiB });
    rows.set(`${jobs}@${procs}`, row);
  }
  const ordered = [...rows.values()].sort((a, b) => a.jobs - b.jobs || a.procs - b.procs);
  for (const row of ordered) {
    const ours = best([...row.ids].filter(([id]) => isStampede(id)).map(([id, v]) => [id, v.jobsPerSec]), 'max');
    const peer = row.ids.get(DRAIN_PEER)?.jobsPerSec ?? null;
    out.push(
      verdict(
        `drain ${row.jobs.toLocaleString('en-US')} jobs, ${procsText(row.procs)}: stampede >= 1.2x ${DRAIN_PEER}`,
        ours?.[1] ?? null,
        peer === null ? null : peer * 1.2,
        'higher',
        ours ? `${ours[0]}; ${DRAIN_PEER} ${peer === null ? 'not measured' : Math.round(peer).toLocaleString('en-US')} jobs/s` : '',
      ),
    );
  }
  const lat = Object.entries(m.latency);
  const ours = m.latency.stampede;
  const ourConcurrency = configById('stampede').concurrency;
  const peers = lat.filter(([id]) => !isStampede(id));
  const equal = best(peers.filter(([id]) => configById(id).concurrency === ourConcurrency).map(([id, v]) => [id, v.p99]), 'min');
  const any = best(peers.map(([id, v]) => [id, v.p99]), 'min');
  const anyNote = any && any[0] !== equal?.[0] ? `; best peer at any setting: ${any[0]}, p99 ${any[1].toFixed(1)} ms` : '';
  out.push(
    verdict(`latency p99 <= best peer at concurrency ${ourConcurrency}`, ours?.p99 ?? null, equal?.[1] ?? null, 'lower', equal ? `${equal[0]}${anyNote}` : `no peer at concurrency ${ourConcurrency} ran`),
  );
  out.push(verdict('latency max <= 50 ms', ours?.max ?? null, 50, 'lower'));
  const rssRows: { name: string; ids: [string, number | null][] }[] = [
    ...ordered.map((row) => ({ name: `drain ${fmtRows(row.jobs)} x${row.procs}`, ids: [...row.ids].map(([id, v]) => [id, v.rss] as [string, number | null]) })),
    { name: 'latency', ids: lat.map(([id, v]) => [id, v.peakRssMiB] as [string, number | null]) },
  ];
  let worst: { ours: [string, number]; peer: [string, number]; row: string } | null = null;
  for (const row of rssRows) {
    const o = best(row.ids.filter(([id]) => isStampede(id)), 'max');
    const p = best(row.ids.filter(([id]) => !isStampede(id)), 'min');
    if (o && p && (!worst || o[1] / p[1] > worst.ours[1] / worst.peer[1])) worst = { ours: o, peer: p, row: row.name };
  }
  out.push(
    verdict(
      'worker peak RSS <= the leanest peer (worst row)',
      worst?.ours[1] ?? null,
      worst?.peer[1] ?? null,
      'lower',
      worst ? `${worst.row}: ${worst.ours[0]} vs ${worst.peer[0]}` : '',
    ),
  );
  return out;
}

/** The sections a plan asks for. Pure. */
export function checkTargets(issues: readonly (10 | 15)[], m: Medians, scale: ScaleResult | null): TargetSection[] {
  return issues.map((issue) => ({ issue, verdicts: issue === 10 ? checkIssue10Targets(m, scale) : checkIssue15Targets(m) }));
}
