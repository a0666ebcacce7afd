import type { VerbInput } from '../actions.ts';
import { html, type Html } from '../html.ts';
import { layout, type PageContext } from './layout.ts';

/**
 * The second step of every control verb: says what will happen, asks who
 * and why (recorded with the change), and only its own POST, with
 * confirm=yes, does it.
 */
export function confirmPage(ctx: PageContext, verb: string, label: string, description: string, form: URLSearchParams, back: string, inputs: VerbInput[] = []): Html {
  const edited = new Set(inputs.map((i) => i.name));
  const carried = [...form.entries()].filter(([k]) => !['_csrf', 'confirm', 'by', 'reason', 'back'].includes(k) && !edited.has(k));
  const body = html`<p id="confirm-text">${description}</p>
<form method="post" action="/actions/${verb}"><fieldset>
<input type="hidden" name="_csrf" value="${ctx.session?.csrf ?? ''}"><input type="hidden" name="confirm" value="yes"><input type="hidden" name="back" value="${back}">
${carried.map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
${inputs.map((i) => html`<p><label>${i.label} <input type="text" name="${i.name}" value="${form.get(i.name) ?? ''}"></label> <span class="muted">${i.hint}</span></p>`)}
<label>who <input type="text" name="by" value="${ctx.session?.operator ?? ''}" required maxlength="200"></label>
<label>why <input type="text" name="reason" required maxlength="500"></label>
<button type="submit" id="confirm">Yes: ${label}</button> <a href="${back}">Cancel</a></fieldset></form>`;
  return layout(ctx, `Confirm: ${label}`, body);
}

/** An error page; the message is escaped like everything else. */
export function errorPage(ctx: PageContext, title: string, message: string): Html {
  return layout(ctx, title, html`<p class="flash error" id="error">${message}</p>`);
}
