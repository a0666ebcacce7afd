import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TopLevelSpec } from 'vega-lite';
import { renderSvg } from '../reports/render/charts.ts';
import type { BenchResults } from './report.ts';
import type { HorizonResult } from './workloads/horizon.ts';

const MiB = 2 ** 20;
const n = (v: number) => Math.round(v).toLocaleString('en');
const ms = (v: number | null) => (v === null ? '-' : v >= 100 ? n(v) : v.toFixed(1));

/**
 * The chart of docs/horizon.svg as a vega-lite spec (rendered by the scenario
 * reports' own renderer): one panel per figure over the minutes, one line per
 * config; latencies on a log scale, as they span milliseconds to minutes.
 */
export function horizonChartSpec(r: HorizonResult): TopLevelSpec {
  const rows = r.runs.flatMap((run) =>
    run.minutes.map((m) => ({
      config: run.id,
      minute: m.minute,
      backlog: m.backlog,
      p99: m.p99Ms,
      lockWait: m.lockWaitMaxMs > 0 ? m.lockWaitMaxMs : null,
      dead: m.deadTuples,
      mib: (m.tableBytes + m.indexBytes) / MiB,
    })),
  );
  const panel = (field: string, title: string, log = false) => ({
    title: { text: title, anchor: 'start', fontSize: 12 },
    width: 700,
    height: 140,
    transform: [{ filter: `isValid(datum.${field})` }],
    mark: { type: 'line', point: true, strokeWidth: 1.6 },
    encoding: {
      x: { field: 'minute', type: 'quantitative', title: 'minute', scale: { domain: [0, r.minutes] }, axis: { tickMinStep: 1, format: 'd' } },
      y: { field, type: 'quantitative', title: null, ...(log ? { scale: { type: 'log' } } : {}) },
      color: { field: 'config', type: 'nominal', title: 'config' },
    },
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: `Held xmin horizon: ${r.ratePerSec} jobs/s offered, ${r.readers} overlapping ${r.readerHoldS} s REPEATABLE READ readers`, anchor: 'start', fontSize: 13 },
    background: 'white',
    data: { values: rows },
    vconcat: [
      panel('backlog', 'backlog (jobs enqueued, not yet handled)'),
      panel('p99', 'claim latency p99, due-to-start (ms, log scale)', true),
      panel('lockWait', 'longest lock wait seen (ms, log scale)', true),
      panel('dead', 'dead tuples in the hot table'),
      panel('mib', 'hot table + its indexes (MiB)'),
    ],
  } as unknown as TopLevelSpec;
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

/** docs/horizon-bench.md and docs/horizon.svg from a run's results (the configs it has finished so far). */
export async function writeHorizonDocs(results: Pick<BenchResults, 'machine' | 'command' | 'date'> & { horizon: HorizonResult }, loadAtEnd: number): Promise<void> {
  const docs = (name: string) => fileURLToPath(new URL(`../docs/${name}`, import.meta.url));
  const m = results.machine;
  const machine = `${m.cores} cores (${m.cpuModel}), ${m.memGiB} GiB, ${m.postgres} (${m.server}), Node ${m.node}, ${Object.entries(m.versions).map(([k, v]) => `${k} ${v}`).join(', ')}`;
  writeFileSync(docs('horizon.svg'), await renderSvg(horizonChartSpec(results.horizon)));
  writeFileSync(
    docs('horizon-bench.md'),
    renderHorizonMarkdown(results.horizon, {
      command: results.command,
      date: `${results.date.slice(0, 16).replace('T', ' ')} UTC`,
      machine,
      loadAverage: `${m.loadAverage1m.toFixed(1)} at the start, ${loadAtEnd.toFixed(1)} at the end`,
    }),
  );
}

// `npm run bench:horizon-docs -- bench/results/<file>.json`: the docs again from a finished run's results,
// without running it again (the run writes them itself unless --no-docs).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2];
  let results: BenchResults | null = null;
  try {
    results = file ? (JSON.parse(readFileSync(file, 'utf8')) as BenchResults) : null;
  } catch (err) {
    process.stderr.write(`bench:horizon-docs: cannot read "${file}" as a results file: ${(err as Error).message}\n`);
    process.exit(2);
  }
  if (!results?.horizon) {
    process.stderr.write(`usage: npm run bench:horizon-docs -- <results.json of a --preset horizon run>; got ${file ? `"${file}", which has no horizon results` : 'no file'}\n`);
    process.exit(2);
  }
  await writeHorizonDocs({ ...results, horizon: results.horizon }, results.loadAverage1mAtEnd);
}
