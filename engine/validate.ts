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
 * Serializes a payload, refusing what JSON cannot carry faithfully: functions,
 * symbols, BigInt, cycles, undefined at the top, and non-finite numbers. Returns the JSON text.
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
      case 'object': {
        if (v === null) return;
        if (seen.has(v)) throw new ValidationError(path, 'is a cycle back to an enclosing object; expected a tree');
        seen.add(v);
        if (typeof (v as { toJSON?: unknown }).toJSON === 'function') {
          seen.delete(v);
          return;
        }
        for (const [k, child] of Object.entries(v)) walk(child, Array.isArray(v) ? `${path}[${k}]` : `${path}.${k}`);
        seen.delete(v);
      }
    }
  };
  walk(payload, field);
  const text = JSON.stringify(payload);
  const bytes = Buffer.byteLength(text, 'utf8');
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
    throw new ValidationError(field, `${String(value)} is not an integer in [${min}, ${max}]`);
  }
  return value;
}

export function validateKey(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 512) {
    throw new ValidationError(field, 'expected a non-empty string of at most 512 characters');
  }
  return value;
}
