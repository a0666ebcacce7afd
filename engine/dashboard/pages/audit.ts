import type { AuditEntry } from '../../control/index.ts';
import { html, type Html } from '../html.ts';
import { layout, link, type PageContext } from './layout.ts';

/** Operator actions as a table: when, what, on which queue and job, who and why. */
export function auditTable(entries: AuditEntry[], options: { showTarget: boolean }): Html {
  if (!entries.length) return html`<p class="muted">no operator action recorded</p>`;
  return html`<table id="audit"><thead><tr><th>at</th><th>verb</th>${options.showTarget ? html`<th>queue</th><th>job</th>` : ''}<th>who</th><th>why</th><th>detail</th></tr></thead>
<tbody>${entries.map(
    (a) => html`<tr><td>${a.at}</td><td>${a.verb}</td>${options.showTarget ? html`<td><a href="${link('/audit', { queue: a.queue })}">${a.queue}</a></td><td>${a.jobId === null ? '' : html`<a href="/jobs/${a.jobId}">${a.jobId}</a>`}</td>` : ''}
<td>${a.actor}</td><td><pre>${a.reason}</pre></td><td><pre>${JSON.stringify(a.detail)}</pre></td></tr>`,
  )}</tbody></table>`;
}

export function auditPage(ctx: PageContext, queue: string | null, entries: AuditEntry[], limit: number): Html {
  const body = html`<form method="get" action="/audit"><fieldset><label>queue <input type="text" name="queue" value="${queue ?? ''}"></label>
<button type="submit">Filter</button>${queue ? html` <a href="/audit">all queues</a>` : ''}</fieldset></form>
<p>The newest ${limit} operator actions${queue ? html` on ${queue}` : ''} (stampede.control_audit). Schedule pauses are in the dashboard's log, not here.</p>
${auditTable(entries, { showTarget: true })}`;
  return layout(ctx, 'Operator actions', body);
}
