import type { Schedule } from '../../cron/schedule.ts';
import { html, type Html } from '../html.ts';
import { actionButton, layout, link, type PageContext } from './layout.ts';

export function schedulesPage(ctx: PageContext, schedules: Schedule[]): Html {
  const body = html`<table id="schedules"><thead><tr><th>id</th><th>cron</th><th>zone</th><th>queue</th><th>DST policy</th><th>catch-up</th>
<th>state</th><th>materialized until</th><th>payload</th><th></th></tr></thead>
<tbody>${schedules.length
    ? schedules.map(
        (s) => html`<tr id="${s.id}" data-schedule="${s.id}"><td>${s.id}</td><td><code>${s.cron}</code></td><td>${s.timezone}</td>
<td><a href="${link('/jobs', { queue: s.queue })}">${s.queue}</a></td><td>${s.dstPolicy}</td><td>${s.catchUp}</td>
<td data-field="state">${s.enabled ? 'enabled' : html`<span class="warn">paused</span>`}</td><td>${s.lastMaterializedUntil}</td>
<td><pre>${JSON.stringify(s.payload)}</pre></td>
<td>${s.enabled ? actionButton(ctx, 'pause-schedule', { id: s.id }, 'Pause') : actionButton(ctx, 'resume-schedule', { id: s.id }, 'Resume')}</td></tr>`,
      )
    : html`<tr><td colspan="10" class="muted">no schedules (npm run schedules -- add …)</td></tr>`}</tbody></table>
<p class="muted">Pausing stops materializing; occurrences already written (at most the materializer's lookahead) still run.
Resuming skips what fell due while paused.</p>`;
  return layout(ctx, 'Schedules', body);
}
