/** Replaces the password of every `scheme://user:password@host` in `text` with `***`. */
export function redactSecrets(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/[^:/?#@\s]*:)([^@\s/]*)@/gi, '$1***@');
}
