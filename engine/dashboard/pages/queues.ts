import type { Schedule } from '../../cron/schedule.ts';
import type { QueueFigures, QueueStateSnapshot } from '../../metrics/queue-state-sampler.ts';
import { html, type Html } from '../html.ts';
import type { QueueSetting } from '../queries.ts';
import { formatAge, layout, link, type PageContext } from './layout.ts';

export interface QueuesPageData {
  snapshot: QueueStateSnapshot;
  settings: QueueSetting[];
  schedules: Schedule[];
  /** The oldest-unclaimed-age objective, ms (the alert rule's 60 s by default). */
  sloMs: number;
}

const NO_FIGURES: QueueFigures = { pending: 0, failed: 0, due: 0, claimed: 0, leasesOverdue: 0, deadLetters: 0, oldestUnclaimedAgeMs: 0, depthCapped: false };

/** Every queue anything knows of: live rows, dead letters, settings or schedules. */
function queueNames(d: QueuesPageData): string[] {
  const names = new Set([...Object.keys(d.snapshot.queues), ...d.settings.map((s) => s.queue), ...d.schedules.map((s) => s.queue)]);
  return [...names].sort();
}

export function queuesPage(ctx: PageContext, d: QueuesPageData): Html {
  const settings = new Map(d.settings.map((s) => [s.queue, s]));
  const names = queueNames(d);
  const s = d.snapshot;
  const rows = names.map((name) => {
    const f = s.queues[name] ?? NO_FIGURES;
    const over = f.oldestUnclaimedAgeMs > d.sloMs;
    const setting = settings.get(name);
    const capped = f.depthCapped ? html`<span class="muted" title="counted up to the sampler's cap: a lower bound">≥</span>` : '';
    return html`<tr data-queue="${name}">
<td><a href="${link('/jobs', { queue: name })}">${name}</a></td>
<td class="num">${capped}${f.pending}</td><td class="num">${capped}${f.failed}</td><td class="num">${capped}${f.due}</td>
<td class="num">${f.claimed}${f.leasesOverdue ? html` <span class="warn" title="leases expired, not yet rescued">(${f.leasesOverdue} overdue)</span>` : ''}</td>
<td class="num${over ? ' bad' : ''}" data-oldest-ms="${Math.round(f.oldestUnclaimedAgeMs)}">${f.oldestUnclaimedAgeMs > 0 ? formatAge(f.oldestUnclaimedAgeMs) : '–'}${over ? ' over SLO' : ''}</td>
<td class="num${f.deadLetters ? ' bad' : ''}">${f.deadLetters ? html`<a href="${link('/dead-letters', { queue: name })}">${f.deadLetters}</a>` : '0'}</td>
<td>${setting?.maxAttempts ? `max attempts ${setting.maxAttempts}` : html`<span class="muted">defaults</span>`}</td>
</tr>`;
  });
  const body = html`<p>Sampled in ${Math.round(s.durationMs)} ms from the live rows only (the sampler's index probes; done rows are never read).
The objective for the oldest due, unclaimed job is ${formatAge(d.sloMs)}.</p>
<table id="queues"><thead><tr><th>queue</th><th>pending</th><th>failed (retry scheduled)</th><th>due now</th><th>claimed</th>
<th>oldest unclaimed</th><th>dead letters</th><th>limits</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="8" class="muted">no queue has live jobs, dead letters, settings or schedules</td></tr>`}</tbody></table>
<h2>Database</h2>
<dl><dt>done jobs in the hot table</dt><dd>${s.done}${s.doneIsEstimate ? ' (estimate from statistics)' : ''}</dd>
<dt>dead tuples in stampede.jobs</dt><dd>${s.jobsDeadTuples}</dd>
<dt>oldest transaction holding back vacuum</dt><dd>${s.xminHorizonAgeMs > 0 ? formatAge(s.xminHorizonAgeMs) : 'none'} (${s.xminHorizonAgeXids} xids)</dd></dl>`;
  return layout(ctx, 'Queues', body);
}
