import type { QueueControl } from '../../control/index.ts';
import type { Schedule } from '../../cron/schedule.ts';
import { EMPTY_QUEUE, type QueueFigures, type QueueStateSnapshot } from '../../metrics/queue-state-sampler.ts';
import { queueLimitsButton, queuePauseButton } from '../actions.ts';
import { html, type Html } from '../html.ts';
import type { KeyBacklog } from '../queries.ts';
import { formatAge, layout, link, type PageContext } from './layout.ts';

export interface QueuesPageData {
  snapshot: QueueStateSnapshot;
  /** How old the snapshot is, ms, database clock: 0 for a round the page ran, the row's age for the elected sampler's. */
  roundAgeMs: number;
  /** The shared round's number (stampede.queue_state_rounds.round_no), or null for a round the page ran. */
  roundNo: number | null;
  /** stampede.queue_settings: paused, limits, attempt budget. */
  controls: QueueControl[];
  schedules: Schedule[];
  /** The fair queues' largest keys by due backlog (engine/dashboard/queries.ts largestKeys). */
  keys: KeyBacklog[];
  /** The oldest-unclaimed-age objective, ms (the alert rule's 60 s by default). */
  sloMs: number;
  /** Reload every this many seconds (?refresh=N), or null. */
  refreshSeconds: number | null;
}


/** Every queue anything knows of: live rows, dead letters, settings or schedules. */
function queueNames(d: QueuesPageData): string[] {
  const names = new Set([...Object.keys(d.snapshot.queues), ...d.controls.map((s) => s.queue), ...d.schedules.map((s) => s.queue)]);
  return [...names].sort();
}

/** The limits beside what they hold back now (the sampler's figure: due jobs waiting only for the limit). */
function limits(c: QueueControl | undefined, f: QueueFigures): Html {
  const parts = [
    c?.maxInFlight != null ? `in flight ${f.claimed} of ${c.maxInFlight}` : null,
    c?.maxStartsPerSecond != null ? `starts ≤ ${c.maxStartsPerSecond}/s` : null,
    c?.sequential ? 'sequential per key' : c?.maxInFlightPerKey != null ? `per key ≤ ${c.maxInFlightPerKey}` : null,
    c?.maxAttempts != null ? `max attempts ${c.maxAttempts}` : null,
  ].filter((p) => p !== null);
  if (!parts.length) return html`<span class="muted">none</span>`;
  return html`${parts.join(', ')}${f.heldBackByLimit ? html`; <span class="warn" data-field="held-back">${f.heldBackByLimit} due held back by the limit</span>` : ''}`;
}

/**
 * What the queues page marks, as a table read on every render (the harness's
 * mutants swap an entry, harness/mutants/types.ts INTERNAL_TABLES): a queue is
 * over its objective when its oldest due, unclaimed job has waited longer than
 * sloMs, both in ms on the database clock.
 */
export const queueMarks = {
  overSlo: (oldestAgeMs: number, sloMs: number): boolean => oldestAgeMs > sloMs,
};

/**
 * The oldest due, unclaimed job against the objective. A paused queue's age
 * grows by design: it is shown as paused, not as stuck, so an operator
 * knows which of the two is on fire.
 */
function oldestCell(f: QueueFigures, paused: boolean, sloMs: number): Html {
  const age = f.oldestUnclaimedAgeMs;
  const over = queueMarks.overSlo(age, sloMs);
  const cls = over ? (paused ? 'num warn' : 'num bad') : 'num';
  const note = over ? (paused ? ' over SLO (paused)' : ' over SLO') : '';
  // The figure and the verdict as data too, so a script (or the harness's open tab) reads what an operator sees.
  return html`<td class="${cls}" data-oldest-ms="${Math.round(age)}" data-over-slo="${over ? '1' : '0'}">${age > 0 ? formatAge(age) : '–'}${note}</td>`;
}

/** "~" before a figure past the round's row budget: an estimate (docs/metrics.md gives its error). */
const ESTIMATE_MARK = html`<span class="muted" data-estimate="1" title="estimated: this queue is past its share of the sampler's row budget (docs/metrics.md)">~</span>`;

/** Where the figures come from: the elected sampler's shared round, or one the page ran. */
function roundNote(d: QueuesPageData): Html {
  const s = d.snapshot;
  const took = `${Math.round(s.durationMs)} ms`;
  if (s.source === 'shared') {
    // The round's number and leader as data too: an operator (or a script) can tell one round from the next.
    return html`<span data-field="round-source" data-source="shared" data-round-no="${d.roundNo ?? ''}" data-leader="${s.leader ?? ''}" data-age-ms="${Math.round(Math.max(0, d.roundAgeMs))}">Sampled ${formatAge(Math.max(0, d.roundAgeMs))} ago by the elected sampler ${s.leader ?? ''} (round ${d.roundNo ?? '?'}) in ${took}</span>, from the live rows only (index probes, a bounded count; done rows are never read).`;
  }
  return html`<span data-field="round-source" data-source="own">Sampled in ${took} by this page</span> (no sampler's round was fresh), from the live rows only (index probes, a bounded count; done rows are never read).`;
}

/** The fair queues' largest tenants: who holds the backlog, how long their oldest job waited, how many run. */
function keysSection(keys: KeyBacklog[]): Html | '' {
  if (!keys.length) return '';
  const rows = keys.map(
    (k) => html`<tr data-key="${k.queue}/${k.key}"><td>${k.queue}</td><td>${k.key}</td><td class="num">${k.due}</td><td class="num">${formatAge(k.oldestWaitMs)}</td><td class="num">${k.inFlight}</td></tr>`,
  );
  return html`<h2>Largest keys of fair queues</h2>
<table id="keys"><thead><tr><th>queue</th><th>key</th><th>due now</th><th>oldest due waited</th><th>in flight</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export function queuesPage(ctx: PageContext, d: QueuesPageData): Html {
  const controls = new Map(d.controls.map((s) => [s.queue, s]));
  const s = d.snapshot;
  const rows = queueNames(d).map((name) => {
    const f = s.queues[name] ?? EMPTY_QUEUE;
    const c = controls.get(name);
    const paused = c?.paused ?? false;
    const est = f.depthEstimated ? ESTIMATE_MARK : '';
    const deadEst = f.deadLettersEstimated ? ESTIMATE_MARK : '';
    return html`<tr data-queue="${name}">
<td><a href="${link('/jobs', { queue: name })}">${name}</a></td>
<td class="num">${est}${f.pending}</td><td class="num">${est}${f.failed}</td><td class="num">${est}${f.due}</td>
<td class="num">${f.claimed}${f.leasesOverdue ? html` <span class="warn" title="leases expired, not yet rescued">(${f.leasesOverdue} overdue)</span>` : ''}</td>
${oldestCell(f, paused, d.sloMs)}
<td class="num${f.deadLetters ? ' bad' : ''}">${f.deadLetters ? html`${deadEst}<a href="${link('/dead-letters', { queue: name })}">${f.deadLetters}</a>` : '0'}</td>
<td data-field="paused">${paused ? html`<span class="warn">paused</span> since ${c!.pausedAt} by ${c!.pausedBy}: ${c!.pausedReason}` : 'running'}</td>
<td>${limits(c, f)}</td><td>${queuePauseButton(ctx, name, paused)} ${queueLimitsButton(ctx, name, c)} <a href="${link('/audit', { queue: name })}">actions</a></td>
</tr>`;
  });
  const body = html`<p>${roundNote(d)}
The objective for the oldest due, unclaimed job is ${formatAge(d.sloMs)}.
${d.refreshSeconds === null ? html`<a href="/queues?refresh=10">Reload every 10 s</a>` : html`Reloading every ${d.refreshSeconds} s: <a href="/queues">stop</a>`}</p>
<table id="queues"><thead><tr><th>queue</th><th>pending</th><th>failed (retry scheduled)</th><th>due now</th><th>claimed</th>
<th>oldest unclaimed</th><th>dead letters</th><th>state</th><th>limits</th><th></th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="10" class="muted">no queue has live jobs, dead letters, settings or schedules</td></tr>`}</tbody></table>
${keysSection(d.keys)}
<h2>Database</h2>
<dl><dt>done jobs in the hot table</dt><dd>${s.done}${s.doneIsEstimate ? ' (estimate from statistics)' : ''}</dd>
<dt>dead tuples in stampede.jobs</dt><dd>${s.jobsDeadTuples}</dd>
<dt>oldest transaction holding back vacuum</dt><dd>${s.xminHorizonAgeMs > 0 ? formatAge(s.xminHorizonAgeMs) : 'none'} (${s.xminHorizonAgeXids} xids)</dd></dl>`;
  return layout(ctx, 'Queues', body, d.refreshSeconds);
}
