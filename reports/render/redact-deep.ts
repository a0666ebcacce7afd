import { redactSecrets } from '../../engine/redact.ts';

/**
 * A copy of `value` with every string (object keys included) passed through
 * redactSecrets, so a password in a URL anywhere in the input (the replay
 * command, a fault's detail, an error message) never reaches an output.
 */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redactSecrets(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v)) as T;
  if (value instanceof Set) return new Set([...value].map((v) => redactDeep(v))) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[redactSecrets(k)] = redactDeep(v);
    return out as T;
  }
  return value;
}
