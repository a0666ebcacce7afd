import type { AuditEntry, QueueControl } from '../../control/index.ts';
import type { Schedule } from '../../cron/schedule.ts';
import { html, prettyJson, type Html } from '../html.ts';
import { cronOrigin, SEARCH_STATES, type DeadLetterInfo, type JobSearch, type JobView } from '../queries.ts';
import { jobActionButtons } from '../actions.ts';
import { auditTable } from './audit.ts';
import { formatAge, layout, link, type PageContext } from './layout.ts';

/** The search form's raw fields, echoed back into the form. */
export interface SearchForm {
  id: string;
  key: string;
  queue: string;
  state: string;
}

function payloadPreview(payload: unknown): string {
  const text = JSON.stringify(payload) ?? '';
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
}

export function searchPage(ctx: PageContext, form: SearchForm, search: JobSearch | null, jobs: JobView[], scanRows: number): Html {
  const stateOptions = ['', ...SEARCH_STATES].map(
    (s) => html`<option value="${s}"${form.state === s ? html` selected` : ''}>${s || 'any state'}</option>`,
  );
  const results =
    search === null
      ? html`<p class="muted">Search by job id, by idempotency key, or by queue and state.</p>`
      : html`<p>${jobs.length} job${jobs.length === 1 ? '' : 's'} found (at most ${search.limit ?? 50} per state).
${search.state === 'done' || (search.state === undefined && search.id === undefined && search.idempotencyKey === undefined)
  ? html` Done jobs: the newest ${scanRows} completions of the hot table${search.queue ? ', and the archive of this queue' : ' (give a queue to search the archive too)'}.`
  : ''}</p>
<table id="results"><thead><tr><th>id</th><th>queue</th><th>state</th><th>priority</th><th>attempts</th><th>run at</th><th>finished</th><th>payload</th><th>last error</th></tr></thead>
<tbody>${jobs.map(
          (j) => html`<tr data-job-id="${j.id}"><td><a href="/jobs/${j.id}">${j.id}</a></td><td>${j.queue}</td><td>${j.state}${j.archived ? ' (archived)' : ''}</td>
<td class="num">${j.priority}</td><td class="num">${j.attempts}/${j.maxAttempts}</td><td>${j.runAt}</td><td>${j.finishedAt ?? ''}</td>
<td><pre>${payloadPreview(j.payload)}</pre></td><td><pre>${j.lastError ?? ''}</pre></td></tr>`,
        )}</tbody></table>`;
  const body = html`<form method="get" action="/jobs"><fieldset>
<label>id <input type="text" name="id" value="${form.id}" inputmode="numeric"></label>
<label>idempotency key <input type="text" name="key" value="${form.key}"></label>
<label>queue <input type="text" name="queue" value="${form.queue}"></label>
<label>state <select name="state">${stateOptions}</select></label>
<button type="submit">Search</button></fieldset></form>${results}`;
  return layout(ctx, 'Jobs', body);
}

export interface JobDetail {
  job: JobView;
  deadLetter: DeadLetterInfo | null;
  schedule: Schedule | null;
  /** Operator actions on this job, newest first (stampede.control_audit). */
  audit: AuditEntry[];
  /** Its queue's settings, to say when the queue is paused. */
  queueControl: QueueControl | null;
}

export function jobPage(ctx: PageContext, d: JobDetail): Html {
  const j = d.job;
  const origin = cronOrigin(j);
  const leaseExpired = j.leaseExpiresAt !== null && j.leaseExpiresAt.getTime() < ctx.dbNow.getTime();
  const body = html`<dl id="job">
<dt>queue</dt><dd><a href="${link('/jobs', { queue: j.queue })}">${j.queue}</a>${d.queueControl?.paused ? html` <span class="warn">paused since ${d.queueControl.pausedAt} by ${d.queueControl.pausedBy}: ${d.queueControl.pausedReason}</span>` : ''}</dd>
<dt>state</dt><dd data-field="state">${j.state}${j.archived ? ' (archived to stampede.job_history)' : ''}</dd>
<dt>priority</dt><dd>${j.priority}</dd>
<dt>attempts</dt><dd>${j.attempts} of ${j.maxAttempts}${j.crashCount ? html`, <span class="warn">${j.crashCount} crash${j.crashCount === 1 ? '' : 'es'} (expired leases)</span>` : ''}</dd>
<dt>run at</dt><dd>${j.runAt}</dd>
<dt>lease holder</dt><dd>${j.leaseOwner ?? html`<span class="muted">none</span>`}</dd>
<dt>lease expires</dt><dd>${j.leaseExpiresAt ? html`${j.leaseExpiresAt} ${leaseExpired ? html`<span class="warn">expired ${formatAge(ctx.dbNow.getTime() - j.leaseExpiresAt.getTime())} ago; the rescuer will hand it back</span>` : `(in ${formatAge(j.leaseExpiresAt.getTime() - ctx.dbNow.getTime())})`}` : html`<span class="muted">–</span>`}</dd>
<dt>idempotency key</dt><dd>${j.idempotencyKey ?? html`<span class="muted">none</span>`}</dd>
<dt>cron origin</dt><dd>${origin ? html`schedule <a href="/schedules#${origin.scheduleId}">${origin.scheduleId}</a>, occurrence ${origin.occurrence}${d.schedule ? html` (${d.schedule.cron}, ${d.schedule.timezone}, ${d.schedule.enabled ? 'enabled' : 'paused'})` : ' (schedule removed)'}` : html`<span class="muted">not from a schedule</span>`}</dd>
<dt>created</dt><dd>${j.createdAt}</dd><dt>updated</dt><dd>${j.updatedAt}</dd><dt>finished</dt><dd>${j.finishedAt ?? html`<span class="muted">–</span>`}</dd>
${d.deadLetter ? html`<dt>dead because</dt><dd class="bad"><code>${d.deadLetter.code}</code> <pre>${d.deadLetter.reason}</pre> at ${d.deadLetter.diedAt}</dd>` : ''}
</dl>
<p>${jobActionButtons(ctx, j)}</p>
<h2>Payload</h2><pre id="payload">${prettyJson(j.payload)}</pre>
<h2>Operator actions</h2>${auditTable(d.audit, { showTarget: false })}
<h2>Error history</h2>${
    j.errors.length
      ? html`<table id="errors"><thead><tr><th>attempt</th><th>at</th><th>kind</th><th>error</th></tr></thead><tbody>${j.errors.map(
          (e) => html`<tr><td class="num">${e.attempt ?? ''}</td><td>${e.at ?? ''}</td><td>${e.kind ?? ''}</td><td><pre>${e.error ?? ''}</pre></td></tr>`,
        )}</tbody></table>`
      : html`<p class="muted">no failed attempt</p>`
  }${j.lastError ? html`<h2>Last error</h2><pre id="last-error">${j.lastError}</pre>` : ''}`;
  return layout(ctx, `Job ${j.id}`, body);
}
