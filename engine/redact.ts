/**
 * Replaces the password of every `scheme://user:password@host` in `text` with
 * `***`. The password runs to the last `@` before whitespace: one holding an
 * unencoded `@` or `/` (`p@ss/w0rd`) is hidden whole, not cut at its first `@`.
 */
export function redactSecrets(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/[^:/?#@\s]*:)(\S*)@/gi, '$1***@');
}
