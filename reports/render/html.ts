import type { Block } from './document.ts';

/**
 * Writes the document as one self-contained HTML page: styles inline, chart
 * SVGs inline, no scripts, no external fetches, so it opens offline and can
 * be mailed or attached to a ticket as a single file.
 */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function inline(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? `<code>${escapeHtml(part.slice(1, -1))}</code>` : escapeHtml(part)))
    .join('');
}

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

/** The SVG as vega wrote it, minus any XML prolog, so it can sit inside HTML. */
function inlineSvg(svg: string): string {
  return svg.replace(/^<\?xml[^>]*>\s*/, '');
}

const STYLE = `
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d1d1f;max-width:980px;margin:2rem auto;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.5rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
h3{font-size:1rem;margin:1.2rem 0 .3rem}
code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace;background:#f3f3f3;padding:0 .25em;border-radius:3px;word-break:break-all}
table{border-collapse:collapse;margin:.5rem 0;width:100%}th,td{border:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f7f7f7}td.num{text-align:right;white-space:nowrap}
td.FAIL{color:#b00020;font-weight:600}td.pass{color:#1b7f3b}td.unknown{color:#8a6d00}
figure.chart{margin:1rem 0}figure.chart svg{max-width:100%;height:auto}figcaption{color:#555;font-size:.9rem}
`;

export function toHtml(blocks: Block[], title: string): string {
  const body: string[] = [];
  for (const b of blocks) {
    switch (b.kind) {
      case 'h1':
        body.push(`<h1>${inline(b.text)}</h1>`);
        break;
      case 'h2':
        body.push(`<h2 id="${slug(b.text)}">${inline(b.text)}</h2>`);
        break;
      case 'p':
        body.push(`<p>${inline(b.text)}</p>`);
        break;
      case 'ul':
        body.push(`<ul>\n${b.items.map((i) => `<li>${inline(i)}</li>`).join('\n')}\n</ul>`);
        break;
      case 'table': {
        const head = `<tr>${b.header.map((h) => `<th>${inline(h)}</th>`).join('')}</tr>`;
        const rows = b.rows.map((r) => `<tr>${r.map((c, i) => `<td class="${b.numeric?.[i] ? 'num' : /^(pass|FAIL|unknown)$/.test(c) ? c : ''}">${inline(c)}</td>`).join('')}</tr>`);
        body.push(`<table>\n${head}\n${rows.join('\n')}\n</table>`);
        break;
      }
      case 'chart':
        body.push(
          `<figure class="chart" id="chart-${b.chart.id}" data-chart="${escapeHtml(b.chart.id)}" aria-label="${escapeHtml(b.chart.title)}">\n${inlineSvg(b.chart.svg)}\n<figcaption>${inline(b.chart.caption)}</figcaption>\n</figure>`,
        );
        break;
    }
  }
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${body.join('\n')}
</body>
</html>
`;
}
