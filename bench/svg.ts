/** A small SVG line chart for the bench's docs: panels stacked, one line per series, no dependency. Pure. */

export interface Series {
  name: string;
  /** [x, y]; a null y is a gap. */
  points: [number, number | null][];
}

export interface Panel {
  title: string;
  /** Log scale (base 10) for figures that span decades, such as latencies: values <= 0 are drawn at the floor. */
  log?: boolean;
  series: Series[];
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];
const W = 760;
const PANEL_H = 170;
const LEFT = 70;
const RIGHT = 20;
const TOP = 28;
const BOTTOM = 24;

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Round numbers for an axis label: 1.2k, 3.4M, 12, 0.5. */
export function shortNumber(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e9) return `${+(v / 1e9).toPrecision(3)}G`;
  if (a >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (a >= 1e3) return `${+(v / 1e3).toPrecision(3)}k`;
  return `${+v.toPrecision(3)}`;
}

function panelSvg(p: Panel, top: number, xMax: number): string {
  const ys = p.series.flatMap((s) => s.points.map(([, y]) => y)).filter((y): y is number => y !== null);
  const h = PANEL_H - TOP - BOTTOM;
  const plotW = W - LEFT - RIGHT;
  let yOf: (y: number) => number;
  let ticks: number[];
  if (p.log) {
    const pos = ys.filter((y) => y > 0);
    const lo = Math.floor(Math.log10(pos.length ? Math.min(...pos) : 1));
    const hi = Math.max(lo + 1, Math.ceil(Math.log10(pos.length ? Math.max(...pos) : 10)));
    yOf = (y) => top + TOP + h - ((Math.log10(Math.max(y, 10 ** lo)) - lo) / (hi - lo)) * h;
    ticks = Array.from({ length: hi - lo + 1 }, (_, i) => 10 ** (lo + i));
  } else {
    const max = Math.max(1, ...ys) * 1.05;
    yOf = (y) => top + TOP + h - (y / max) * h;
    ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => (max / 1.05) * f);
  }
  const xOf = (x: number) => LEFT + (x / Math.max(1, xMax)) * plotW;
  const parts = [`<text x="${LEFT}" y="${top + 18}" font-weight="bold">${esc(p.title)}</text>`];
  for (const t of ticks) {
    const y = yOf(t).toFixed(1);
    parts.push(`<line x1="${LEFT}" x2="${W - RIGHT}" y1="${y}" y2="${y}" stroke="#ddd"/>`, `<text x="${LEFT - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${shortNumber(t)}</text>`);
  }
  for (let x = 0; x <= xMax; x += Math.max(1, Math.ceil(xMax / 15))) {
    parts.push(`<text x="${xOf(x).toFixed(1)}" y="${top + PANEL_H - 8}" text-anchor="middle">${x}</text>`);
  }
  p.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const runs: string[][] = [[]];
    for (const [x, y] of s.points) {
      if (y === null) runs.push([]);
      else runs.at(-1)!.push(`${xOf(x).toFixed(1)},${yOf(y).toFixed(1)}`);
    }
    for (const r of runs.filter((r) => r.length)) {
      parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${r.join(' ')}"/>`);
      for (const pt of r) parts.push(`<circle r="2.5" fill="${color}" cx="${pt.split(',')[0]}" cy="${pt.split(',')[1]}"/>`);
    }
  });
  return parts.join('\n');
}

/** Panels stacked over one x axis (0..xMax, labelled `xLabel`), with one legend for the series of the first panel. */
export function lineChartsSvg(title: string, xLabel: string, xMax: number, panels: Panel[]): string {
  const legendH = 22 * Math.max(1, panels[0]?.series.length ?? 0);
  const height = 40 + legendH + panels.length * PANEL_H + 20;
  const legend = (panels[0]?.series ?? []).map(
    (s, i) => `<rect x="${LEFT}" y="${36 + i * 22}" width="14" height="14" fill="${COLORS[i % COLORS.length]}"/><text x="${LEFT + 20}" y="${47 + i * 22}">${esc(s.name)}</text>`,
  );
  const body = panels.map((p, i) => panelSvg(p, 40 + legendH + i * PANEL_H, xMax));
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${LEFT}" y="22" font-size="14" font-weight="bold">${esc(title)}</text>`,
    ...legend,
    ...body,
    `<text x="${W / 2}" y="${height - 4}" text-anchor="middle">${esc(xLabel)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
