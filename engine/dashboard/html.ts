/**
 * HTML built by a tagged template that escapes every interpolated value
 * unless it is already `Html` (the output of another `html` template or of
 * `raw`). Payloads, error texts, queue names and reasons are all operator-
 * or attacker-controlled strings, so escaping is the default and opting out
 * is visible at the call site.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for an element body or a quoted attribute value. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

type Piece = Html | string | number | boolean | null | undefined | Date | readonly Piece[];

function render(value: Piece): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Date) return escapeHtml(value.toISOString());
  return escapeHtml(value);
}

/** `html\`<td>${name}</td>\``: every `${}` is escaped; arrays are joined; null, undefined and false render as nothing. */
export function html(strings: TemplateStringsArray, ...values: Piece[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Html(out);
}

/** Trusted markup, not escaped. Only for constants of this module's own making. */
export function raw(text: string): Html {
  return new Html(text);
}

/** A JSON value pretty-printed for a <pre>, escaped by the caller's template. */
export function prettyJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}
