import { lineChartsSvg } from './svg.ts';
import type { HorizonResult, HorizonRun } from './workloads/horizon.ts';

const MiB = 2 ** 20;
const n = (v: number) => Math.round(v).toLocaleString('en');
const ms = (v: number | null) => (v === null ? '-' : v >= 100 ? n(v) : v.toFixed(1));

/** The chart of docs/horizon.svg: one line per config, per minute. */
export function renderHorizonSvg(r: HorizonResult): string {
  const series = (f: (m: HorizonRun['minutes'][number]) => number | null) => r.runs.map((run) => ({ name: run.id, points: run.minutes.map((m) => [m.minute, f(m)] as [number, number | null]) }));
  return lineChartsSvg(
    `Held xmin horizon: ${r.ratePerSec} jobs/s offered, ${r.readers} overlapping ${r.readerHoldS} s REPEATABLE READ readers`,
    'minute',
    r.minutes,
    [
      { title: 'backlog (jobs enqueued, not yet started)', series: series((m) => m.backlog) },
      { title: 'claim latency p99, due-to-start (ms, log scale)', log: true, series: series((m) => m.p99Ms) },
      { title: 'longest lock wait seen (ms, log scale)', log: true, series: series((m) => m.lockWaitMaxMs) },
      { title: 'dead tuples in the hot table', series: series((m) => m.deadTuples) },
      { title: 'hot table + its indexes (MiB)', series: series((m) => (m.tableBytes + m.indexBytes) / MiB) },
    ],
  );
}

/** Per config: the offered and achieved rate, and the worst of each figure over the run. */
export function renderHorizonSummary(r: HorizonResult): string {
  const lines = [
    '| config | offered / committed jobs/s | shed | handled | peak backlog | end backlog | worst minute p99 (ms) | longest lock wait (ms) | peak dead tuples | end table + indexes (MiB) | reader holds |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const run of r.runs) {
    const m = run.minutes;
    const last = m.at(-1);
    const p99s = m.map((x) => x.p99Ms).filter((x): x is number => x !== null);
    lines.push(
      `| ${run.id} | ${run.offered.offeredPerSec} / ${n(run.offered.achievedPerSec)} | ${n(run.offered.shed)} | ${n(run.handled)} | ${n(Math.max(0, ...m.map((x) => x.backlog)))} | ${n(last?.backlog ?? 0)} | ${ms(p99s.length ? Math.max(...p99s) : null)} | ${ms(Math.max(0, ...m.map((x) => x.lockWaitMaxMs)))} | ${n(Math.max(0, ...m.map((x) => x.deadTuples)))} | ${last ? ((last.tableBytes + last.indexBytes) / MiB).toFixed(1) : '-'} | ${run.readerHolds} |`,
    );
  }
  return lines.join('\n');
}

/** Every config's minutes, one row each. */
export function renderHorizonMinutes(r: HorizonResult): string {
  const lines = [
    '| config | minute | backlog | p99 (ms) | not started | longest lock wait (ms), samples waiting | dead tuples | table (MiB) | indexes (MiB) | horizon age (s) |',
    '| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |',
  ];
  for (const run of r.runs) {
    for (const m of run.minutes) {
      lines.push(
        `| ${run.id} | ${m.minute} | ${n(m.backlog)} | ${ms(m.p99Ms)} | ${n(m.notStarted)} | ${ms(m.lockWaitMaxMs)}, ${m.lockWaitSamples} | ${n(m.deadTuples)} | ${(m.tableBytes / MiB).toFixed(1)} | ${(m.indexBytes / MiB).toFixed(1)} | ${m.horizonAgeS.toFixed(0)} |`,
      );
    }
  }
  return lines.join('\n');
}

/** docs/horizon-bench.md: written by the bench, so the figures and the command never drift apart. */
export function renderHorizonMarkdown(r: HorizonResult, meta: { command: string; date: string; machine: string; loadAverage: string }): string {
  const labels = r.runs.map((run) => `- \`${run.id}\`: ${run.label}`).join('\n');
  return `# The held-horizon bench (generated)

Written by \`${meta.command}\` on ${meta.date} (\`bench/workloads/horizon.ts\`);
do not edit by hand: what the figures mean and what stampede does about a held
horizon are in [performance.md](performance.md#a-held-xmin-horizon-issue-42).

${meta.machine}. Load average (1 min) ${meta.loadAverage}: the machine was shared
with other engineers' runs, so compare the configs with one another, not with
another machine.

The profile: ${r.ratePerSec} jobs/s offered open-loop (the arrivals of each
${r.batchMs} ms in one bulk enqueue of the library's own, so ${Math.round((r.ratePerSec * r.batchMs) / 1000)} jobs a commit;
no-op handlers; one worker process) for ${r.minutes} minutes, ${
    r.readers
      ? `while ${r.readers} REPEATABLE READ transactions of ${r.readerHoldS} s each, started
${Math.round(r.readerHoldS / r.readers)} s apart and each begun again when it ends, hold
the database's xmin horizon`
      : 'with no reader holding the horizon (the control run)'
  }. Each config on a fresh database, one after the
other. Backlog: enqueues committed less jobs handled at the end of the minute.
p99: due-to-start of the jobs due in that minute (the enqueue's commit
included); "not started": jobs due in it that never started before the run
ended. Lock waits: \`pg_locks.waitstart\` sampled every 250 ms. Dead tuples and
sizes: the hot table (for pg-boss, its job partitions).

${labels}

![per-minute figures](horizon.svg)

${renderHorizonSummary(r)}

Per minute:

${renderHorizonMinutes(r)}
`;
}
