import type { Session } from '../auth.ts';
import { html, type Html } from '../html.ts';

/** Served at /style.css: the Content-Security-Policy allows no inline style or script at all. */
export const STYLESHEET = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
header { background: #1d2330; color: #fff; padding: 8px 16px; display: flex; gap: 18px; align-items: baseline; flex-wrap: wrap; }
header a { color: #cfe0ff; text-decoration: none; } header a[aria-current] { color: #fff; font-weight: 600; }
header .brand { font-weight: 700; color: #fff; } header .dbtime { margin-left: auto; color: #aab; font-size: 12px; }
main { padding: 12px 16px; } h1 { font-size: 20px; margin: 6px 0 12px; } h2 { font-size: 16px; margin: 18px 0 8px; }
table { border-collapse: collapse; background: #fff; margin-bottom: 12px; }
th, td { border: 1px solid #d9dde3; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #eef0f4; font-weight: 600; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.bad, span.bad { color: #a40000; font-weight: 600; } span.warn { color: #8a5a00; font-weight: 600; } .muted { color: #667; }
pre { background: #fff; border: 1px solid #d9dde3; padding: 8px; max-width: 100ch; overflow: auto; white-space: pre-wrap; word-break: break-word; margin: 0; }
td pre { border: 0; padding: 0; max-height: 8em; }
form.inline { display: inline; margin: 0; } button { cursor: pointer; }
.flash { padding: 8px 12px; margin-bottom: 12px; border: 1px solid; } .flash.ok { background: #e9f7ec; border-color: #7bc48a; }
.flash.error { background: #fdecec; border-color: #e08585; } dl { display: grid; grid-template-columns: max-content auto; gap: 4px 16px; }
dt { font-weight: 600; } dd { margin: 0; } fieldset { background: #fff; border: 1px solid #d9dde3; margin-bottom: 12px; }
label { margin-right: 12px; } input[type=text] { width: 18em; }
`;

const NAV: { path: string; label: string }[] = [
  { path: '/queues', label: 'Queues' },
  { path: '/jobs', label: 'Jobs' },
  { path: '/dead-letters', label: 'Dead letters' },
  { path: '/schedules', label: 'Schedules' },
  { path: '/audit', label: 'Audit' },
];

export interface PageContext {
  session: Session | null;
  /** The database's now(), shown so ages and expiries can be read against the clock that decides them. */
  dbNow: Date;
  /** The path of this page, to mark it in the menu and to come back to after an action. */
  path: string;
}

/** Reload the page every this many seconds (a meta refresh: no script needed), or null. */
export function layout(ctx: PageContext, title: string, body: Html, refreshSeconds: number | null = null): Html {
  const flash = ctx.session?.flash ?? null;
  if (ctx.session) ctx.session.flash = null;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title} · stampede</title>
<meta name="viewport" content="width=device-width, initial-scale=1">${refreshSeconds === null ? '' : html`<meta http-equiv="refresh" content="${refreshSeconds}">`}<link rel="stylesheet" href="/style.css"></head>
<body><header><span class="brand">stampede</span>${NAV.map(
    (n) => html`<a href="${n.path}"${ctx.path.startsWith(n.path) ? html` aria-current="page"` : ''}>${n.label}</a>`,
  )}<span class="dbtime">database time ${ctx.dbNow}</span></header>
<main><h1>${title}</h1>${flash ? html`<div class="flash ${flash.kind}" role="status">${flash.text}</div>` : ''}${body}</main></body></html>`;
}

/**
 * A button that starts a control verb. It POSTs to /actions/<verb>, which
 * answers with a confirmation page (what will happen, a reason to record);
 * only the confirmed second POST changes anything.
 */
export function actionButton(ctx: PageContext, verb: string, fields: Record<string, string | number>, label: string): Html {
  if (!ctx.session) return html``;
  return html`<form class="inline" method="post" action="/actions/${verb}"><input type="hidden" name="_csrf" value="${ctx.session.csrf}"><input type="hidden" name="back" value="${ctx.path}">${Object.entries(
    fields,
  ).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}<button type="submit" data-verb="${verb}">${label}</button></form>`;
}

/** "1 h 02 min", "3 min 05 s", "12.3 s": an age an operator reads at a glance. */
export function formatAge(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/** A link with query parameters, each encoded. */
export function link(path: string, params: Record<string, string | number | undefined>): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') qs.set(k, String(v));
  const s = qs.toString();
  return s ? `${path}?${s}` : path;
}
