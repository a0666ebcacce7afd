/**
 * Replaces the password of every `scheme://user:password@host` in `text` with
 * `***`. The password runs to the last `@` before whitespace, a query or a
 * fragment: one holding an unencoded `@` or `/` (`p@ss/w0rd`) is hidden
 * whole, not cut at its first `@`, and an `@` in a query
 * (`?application_name=svc@host`) is left alone.
 */
export function redactSecrets(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/[^:/?#@\s]*:)([^\s?#]*)@/gi, '$1***@');
}
