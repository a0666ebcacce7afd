import * as vega from 'vega';
import * as vl from 'vega-lite';
import type { TopLevelSpec } from 'vega-lite';
import type { ReportInput } from './input.ts';
import type { HistoryIndex } from './job-index.ts';
import { queuesOf, type RateRow } from './series.ts';
import { fmtDuration } from './format.ts';

/**
 * The report's charts as vega-lite specs, compiled to vega and rendered to
 * SVG on the server (renderer 'none', no DOM, no canvas: without the optional
 * `canvas` package vega estimates text widths, which is close enough for axis
 * labels). Every chart shares the run's time axis and carries the same
 * markers: fault injections (red rules), alert crossings (orange dashed
 * rules) and the incident window (shaded).
 */
export interface ChartSpec {
  id: string;
  title: string;
  /** One sentence under the chart: what to look at. */
  caption: string;
  spec: TopLevelSpec;
}

export interface RenderedChart extends ChartSpec {
  file: string;
  svg: string;
}

interface Marker {
  s: number;
  label: string;
  kind: 'fault' | 'alert';
  row: number;
}

const WIDTH_PX = 760;
const HEIGHT_PX = 170;
const MAX_MARKERS = 24;
const LABEL_ROWS = 4;
const LABEL_ROW_PX = 11;

function markers(idx: HistoryIndex): Marker[] {
  const raw = [
    ...idx.faults.map((f) => ({ s: f.t / 1000, label: f.detail.phase === 'end' ? `${f.fault} ends` : f.fault, kind: 'fault' as const })),
    ...idx.alerts.map((a) => ({ s: a.t / 1000, label: `${a.direction === 'up' ? '▲' : '▼'} ${a.signal}`, kind: 'alert' as const })),
  ]
    .sort((a, b) => a.s - b.s)
    .slice(0, MAX_MARKERS);
  // Stagger labels over a few rows so neighbouring markers do not print on top of each other.
  return raw.map((m, i) => ({ ...m, row: i % LABEL_ROWS }));
}

type Layer = Record<string, unknown>;

/**
 * Markers: the incident window as a shaded band, each fault and alert as a
 * vertical rule that rises out of the plot into a label band above it, so
 * labels never sit on top of the data.
 */
function markerLayers(ms: Marker[], window: { fromT: number; toT: number } | null, x: Record<string, unknown>): Layer[] {
  const layers: Layer[] = [];
  if (window) {
    layers.push({
      data: { values: [{ from: window.fromT / 1000, to: window.toT / 1000 }] },
      mark: { type: 'rect', color: '#d62728', opacity: 0.06 },
      encoding: { x: { ...x, field: 'from' }, x2: { field: 'to' } },
    });
  }
  if (ms.length === 0) return layers;
  const values = ms.map((m) => ({ ...m, py: -2 - m.row * LABEL_ROW_PX }));
  const rule = (kind: Marker['kind'], style: Record<string, unknown>): Layer => ({
    data: { values },
    transform: [{ filter: `datum.kind === '${kind}'` }],
    mark: { type: 'rule', ...style },
    encoding: { x: { ...x, field: 's' }, y: { field: 'py', type: 'quantitative', scale: null }, y2: { value: HEIGHT_PX } },
  });
  const label = (kind: Marker['kind'], color: string): Layer => ({
    data: { values },
    transform: [{ filter: `datum.kind === '${kind}'` }],
    mark: { type: 'text', align: 'left', baseline: 'bottom', dx: 2, fontSize: 9, color },
    encoding: { x: { ...x, field: 's' }, y: { field: 'py', type: 'quantitative', scale: null }, text: { field: 'label' } },
  });
  layers.push(
    rule('fault', { color: '#d62728', strokeWidth: 1.5 }),
    rule('alert', { color: '#ff7f0e', strokeWidth: 1.2, strokeDash: [4, 3] }),
    label('fault', '#d62728'),
    label('alert', '#c45a00'),
  );
  return layers;
}

function chart(id: string, title: string, caption: string, layers: Layer[]): ChartSpec {
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: title, anchor: 'start', fontSize: 13, offset: 6 },
    width: WIDTH_PX,
    height: HEIGHT_PX,
    background: 'white',
    config: { legend: { orient: 'right' }, axis: { labelFontSize: 10, titleFontSize: 11 } },
    layer: layers,
  } as unknown as TopLevelSpec;
  return { id, title, caption, spec };
}

function noData(message: string): Layer {
  return { data: { values: [{ m: message }] }, mark: { type: 'text', fontSize: 12, color: '#888' }, encoding: { text: { field: 'm' }, x: { value: WIDTH_PX / 2 }, y: { value: HEIGHT_PX / 2 } } };
}

/** The five charts the postmortem embeds, as specs over the run's data. */
export function chartSpecs(input: ReportInput, idx: HistoryIndex, rates: RateRow[], window: { fromT: number; toT: number } | null): ChartSpec[] {
  const endS = Math.max(1, idx.endT / 1000);
  const x = { type: 'quantitative', title: 's since start', scale: { domain: [0, endS], nice: false, zero: true } };
  const ms = markers(idx);
  const marks = () => markerLayers(ms, window, x);
  const qs = queuesOf(idx);
  const sloS = input.thresholds.oldestAgeSloMs / 1000;

  const depth = idx.samples.flatMap((s) => qs.map((q) => ({ s: s.t / 1000, queue: q, depth: s.depthByQueue[q] ?? 0 })));
  const age = idx.samples.flatMap((s) => qs.map((q) => ({ s: s.t / 1000, queue: q, age: (s.oldestUnclaimedAgeMs[q] ?? 0) / 1000 })));
  const dlq = idx.samples.map((s) => ({ s: s.t / 1000, depth: s.deadLetterDepth }));
  // A clock step makes ages of an hour beside an SLO of seconds: a symmetric log scale keeps both the
  // peak and the SLO line (and the recovery under it) readable.
  const peakAgeS = Math.max(0, ...age.map((a) => a.age));
  const logAge = peakAgeS > 100 * sloS;
  // Vega draws linear ticks on a symlog scale; name the ones worth reading.
  const ageTicks = [0, 1, 2, 5, 10, 30, 60, 300, 600, 1800, 3600, 7200].filter((v) => v <= peakAgeS * 1.5);
  const ageY = { type: 'quantitative', ...(logAge ? { scale: { type: 'symlog' }, axis: { values: ageTicks } } : {}) };
  const lane = { field: 'queue', type: 'nominal', title: 'lane' };
  const line = (extra: Record<string, unknown> = {}) => ({ type: 'line', strokeWidth: 1.6, ...extra });
  const ifSamples = (l: Layer) => (idx.samples.length ? l : noData('no samples recorded'));

  // Counts get whole-number ticks; the dead-letter axis leaves room above the threshold line.
  const count = (title: string, extra: Record<string, unknown> = {}) => ({ type: 'quantitative', title, axis: { tickMinStep: 1, format: 'd' }, ...extra });
  const dlqTop = Math.ceil(Math.max(input.thresholds.deadLetterDepth, ...dlq.map((d) => d.depth)) * 1.25) + 1;
  const rateRows = (keys: (keyof RateRow)[]) => rates.flatMap((r) => keys.map((k) => ({ s: r.second, series: k, n: r[k] })));

  return [
    chart('queue-depth', 'Queue depth by lane', 'Pending jobs per lane, from the sampler.', [
      ...marks(),
      ifSamples({ data: { values: depth }, mark: line(), encoding: { x: { ...x, field: 's' }, y: { field: 'depth', ...count('pending jobs') }, color: lane } }),
    ]),
    chart('oldest-age', 'Oldest unclaimed age by lane', `Age of the oldest due, unclaimed job per lane; the dashed line is the ${fmtDuration(input.thresholds.oldestAgeSloMs)} SLO${logAge ? ' (log scale: the peak is over 100 times the SLO)' : ''}.`, [
      ...marks(),
      ifSamples({ data: { values: age }, mark: line(), encoding: { x: { ...x, field: 's' }, y: { field: 'age', ...ageY, title: 'oldest age (s)' }, color: lane } }),
      { data: { values: [{ y: sloS, label: `SLO ${fmtDuration(input.thresholds.oldestAgeSloMs)}` }] }, mark: { type: 'rule', color: '#555', strokeDash: [6, 4] }, encoding: { y: { field: 'y', ...ageY } } },
      { data: { values: [{ y: sloS, label: `SLO ${fmtDuration(input.thresholds.oldestAgeSloMs)}` }] }, mark: { type: 'text', align: 'right', baseline: 'bottom', dy: -2, fontSize: 10, color: '#555' }, encoding: { y: { field: 'y', ...ageY }, x: { value: WIDTH_PX - 4 }, text: { field: 'label' } } },
    ]),
    chart('dead-letter-depth', 'Dead-letter depth', `Rows in the dead-letter queue; the dashed line is the alert threshold (${input.thresholds.deadLetterDepth}).`, [
      ...marks(),
      ifSamples({ data: { values: dlq }, mark: line({ interpolate: 'step-after', color: '#6a3d9a' }), encoding: { x: { ...x, field: 's' }, y: { field: 'depth', ...count('dead letters', { scale: { domain: [0, dlqTop] } }) } } }),
      { data: { values: [{ y: input.thresholds.deadLetterDepth }] }, mark: { type: 'rule', color: '#555', strokeDash: [6, 4] }, encoding: { y: { field: 'y', type: 'quantitative' } } },
    ]),
    chart('rates', 'Claims, completions and failures per second', 'Counted per second from job events.', [
      ...marks(),
      { data: { values: rateRows(['claimed', 'completed', 'failed', 'dead']) }, mark: line({ interpolate: 'step-after' }), encoding: { x: { ...x, field: 's' }, y: { field: 'n', ...count('per second') }, color: { field: 'series', type: 'nominal', title: 'event', scale: { domain: ['claimed', 'completed', 'failed', 'dead'], range: ['#1f77b4', '#2ca02c', '#8c564b', '#6a3d9a'] } } } },
    ]),
    chart('load', 'Offered vs achieved load', `Enqueues per second: offered (intended, ${input.offeredRate.toFixed(1)}/s overall) against achieved (acknowledged, ${input.achievedRate.toFixed(1)}/s overall).`, [
      ...marks(),
      { data: { values: rateRows(['offered', 'achieved']) }, mark: line({ interpolate: 'step-after' }), encoding: {
          x: { ...x, field: 's' },
          y: { field: 'n', ...count('enqueues per second') },
          color: { field: 'series', type: 'nominal', title: 'load', scale: { domain: ['offered', 'achieved'], range: ['#888888', '#1f77b4'] } },
          // Offered is dashed so it stays visible where achieved runs on top of it.
          strokeDash: { field: 'series', type: 'nominal', title: 'load', scale: { domain: ['offered', 'achieved'], range: [[5, 3], [1, 0]] } },
        } },
    ]),
  ];
}

/** Compiles one spec with vega-lite and renders it to an SVG string with a headless vega View. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const compiled = vl.compile(spec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', logLevel: vega.Warn });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
