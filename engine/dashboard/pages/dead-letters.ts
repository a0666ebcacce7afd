import type { DeadLetter } from '../../dead-letters.ts';
import { html, type Html } from '../html.ts';
import type { DeadLetterGroup } from '../queries.ts';
import { bulkRedriveButton } from '../actions.ts';
import { actionButton, layout, link, type PageContext } from './layout.ts';

export interface DeadLettersPageData {
  queue: string | null;
  groups: DeadLetterGroup[];
  letters: DeadLetter[];
  limit: number;
}

function lastError(d: DeadLetter): string {
  return d.errors.at(-1)?.error ?? '';
}

export function deadLettersPage(ctx: PageContext, d: DeadLettersPageData): Html {
  const body = html`<form method="get" action="/dead-letters"><fieldset><label>queue <input type="text" name="queue" value="${d.queue ?? ''}"></label>
<button type="submit">Filter</button>${d.queue ? html` <a href="/dead-letters">all queues</a>` : ''}</fieldset></form>
${d.queue && d.letters.length ? html`<p>${actionButton(ctx, 'redrive-bulk', { queue: d.queue }, `Redrive every dead letter of ${d.queue}`)}</p>` : ''}
<h2>By queue, code and reason</h2>
<table id="reasons"><thead><tr><th>queue</th><th>code</th><th>reason</th><th>jobs</th><th>first died</th><th>last died</th><th></th></tr></thead>
<tbody>${d.groups.length
    ? d.groups.map(
        (g) => html`<tr><td><a href="${link('/dead-letters', { queue: g.queue })}">${g.queue}</a></td><td>${g.code}</td><td><pre>${g.reason}</pre></td><td class="num">${g.jobs}</td>
<td>${g.firstDiedAt}</td><td>${g.lastDiedAt}</td><td>${bulkRedriveButton(ctx, g)}</td></tr>`,
      )
    : html`<tr><td colspan="7" class="muted">no dead letters</td></tr>`}</tbody></table>
<h2>Newest ${d.letters.length === d.limit ? `${d.limit}` : ''} dead letters${d.queue ? html` of ${d.queue}` : ''}</h2>
<table id="dead-letters"><thead><tr><th>job</th><th>queue</th><th>died</th><th>attempts</th><th>code</th><th>reason</th><th>last error</th><th>payload</th><th></th></tr></thead>
<tbody>${d.letters.map(
    (l) => html`<tr data-job-id="${l.jobId}"><td><a href="/jobs/${l.jobId}">${l.jobId}</a></td><td>${l.queue}</td><td>${l.diedAt}</td><td class="num">${l.attempts}</td>
<td>${l.code}</td><td><pre>${l.reason}</pre></td><td><pre>${lastError(l)}</pre></td><td><pre>${JSON.stringify(l.payload)}</pre></td>
<td>${actionButton(ctx, 'redrive', { jobId: l.jobId }, 'Redrive')}</td></tr>`,
  )}</tbody></table>`;
  return layout(ctx, 'Dead letters', body);
}
