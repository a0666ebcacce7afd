import { ValidationError } from './errors.ts';

const QUEUE_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;

export function validateQueueName(queue: unknown, field = 'queue'): string {
  if (typeof queue !== 'string' || queue.length === 0) throw new ValidationError(field, 'expected a non-empty string');
  if (!QUEUE_NAME.test(queue)) {
    throw new ValidationError(field, `"${queue}" is not a queue name; expected 1-128 of A-Z a-z 0-9 _ . : -`);
  }
  return queue;
}

/**
 * Why Postgres would refuse `text` in a text or jsonb column, or null: U+0000,
 * or a lone UTF-16 surrogate (half of a pair, not Unicode). Refused here, the
 * error names the field; sent, it came back as a bare SQLSTATE.
 */
function unstorableText(text: string): string | null {
  if (text.includes('\u0000')) return 'holds U+0000 (NUL), which Postgres cannot store in text or jsonb';
  // With the u flag a surrogate pair is one code point: \p{Cs} matches only a lone half.
  if (/\p{Cs}/u.test(text)) return 'holds a lone UTF-16 surrogate (half of a pair), which is not Unicode text';
  return null;
}

/**
 * Every key of T, listed once: `keysOf<T>()([...])` does not compile while
 * the list misses one (the error names it), so a check of unknown keys
 * cannot fall behind its interface.
 */
export function keysOf<T>() {
  return <const K extends readonly (keyof T & string)[]>(keys: K & ([Exclude<keyof T, K[number]>] extends [never] ? unknown : { missing: Exclude<keyof T, K[number]> })): readonly string[] => keys;
}

/**
 * Refuses a key of `value` that `known` does not list: a misspelt option
 * (`concurency`, `runat`) would otherwise be dropped without a word, and the
 * job run at once or the worker at its defaults.
 */
export function refuseUnknownKeys(value: object, known: readonly string[], field: (key: string) => string, what: string): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) throw new ValidationError(field(key), `is not ${what}; expected one of ${known.join(', ')}`);
  }
}

/**
 * What every component's options share: an object whose `db` can query, with
 * no key its declaration lacks (`known`: engine/options/declare.ts validateDeclared
 * passes the declared names). The declared values are checked after this.
 */
export function checkComponentOptions(o: unknown, known: readonly string[], component: string): void {
  if (typeof o !== 'object' || o === null) throw new ValidationError('options', `expected the ${component} options, an object with at least db`);
  refuseUnknownKeys(o, known, (k) => k, `a ${component} option`);
  if (typeof (o as { db?: { query?: unknown } }).db?.query !== 'function') throw new ValidationError('db', 'expected a Db (new Db({ connectionString }))');
}

/**
 * How a serialized payload is measured against maxPayloadBytes: its UTF-8
 * bytes, what Postgres stores (a string's length counts UTF-16 code units,
 * half the bytes of most accented text). An internal object the package does
 * not export, read on every call: the harness's mutants swap its entry.
 */
export const payloadSize = {
  bytesOf: (text: string): number => Buffer.byteLength(text, 'utf8'),
};

/**
 * Serializes a payload, refusing what JSON cannot carry faithfully: functions,
 * symbols, BigInt, cycles, undefined at the top, non-finite numbers, and
 * strings (values or keys) Postgres cannot store. Returns the JSON text.
 */
export function serializePayload(payload: unknown, maxBytes: number, field = 'payload'): string {
  if (payload === undefined) throw new ValidationError(field, 'is undefined; expected a JSON value (use null or {} for none)');
  const seen = new Set<object>();
  const walk = (v: unknown, path: string): void => {
    switch (typeof v) {
      case 'function':
        throw new ValidationError(path, 'is a function; expected a JSON value');
      case 'symbol':
        throw new ValidationError(path, 'is a symbol; expected a JSON value');
      case 'bigint':
        throw new ValidationError(path, 'is a BigInt; JSON has no BigInt (send it as a string)');
      case 'number':
        if (!Number.isFinite(v)) throw new ValidationError(path, `is ${v}; JSON has only finite numbers`);
        return;
      case 'string': {
        const why = unstorableText(v);
        if (why) throw new ValidationError(path, why);
        return;
      }
      case 'object': {
        if (v === null) return;
        if (seen.has(v)) throw new ValidationError(path, 'is a cycle back to an enclosing object; expected a tree');
        seen.add(v);
        if (typeof (v as { toJSON?: unknown }).toJSON === 'function') {
          seen.delete(v);
          return;
        }
        for (const [k, child] of Object.entries(v)) {
          const at = Array.isArray(v) ? `${path}[${k}]` : `${path}.${k}`;
          const why = Array.isArray(v) ? null : unstorableText(k);
          if (why) throw new ValidationError(path, `has a key that ${why}`);
          walk(child, at);
        }
        seen.delete(v);
      }
    }
  };
  walk(payload, field);
  const text = JSON.stringify(payload);
  const bytes = payloadSize.bytesOf(text);
  if (bytes > maxBytes) throw new ValidationError(field, `is ${bytes} bytes serialized; the limit is ${maxBytes}`);
  return text;
}

export function validateDate(value: unknown, field: string): Date {
  const d = value instanceof Date ? value : typeof value === 'string' || typeof value === 'number' ? new Date(value) : null;
  if (!d || Number.isNaN(d.getTime())) throw new ValidationError(field, `${String(value)} is not a valid date`);
  return d;
}

export function validateInt(value: unknown, field: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const shown = typeof value === 'string' ? `"${value}" (a string)` : String(value);
    throw new ValidationError(field, `${shown} is not an integer in [${min}, ${max}]`);
  }
  return value;
}

export function validateKey(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 512) {
    throw new ValidationError(field, 'expected a non-empty string of at most 512 characters');
  }
  const why = unstorableText(value);
  if (why) throw new ValidationError(field, why);
  return value;
}

/** One of a fixed set of strings (a code, a policy name). */
export function validateOneOf<T extends string>(value: unknown, field: string, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new ValidationError(field, `${JSON.stringify(value)} is not one of ${allowed.join(', ')}`);
  }
  return value as T;
}
