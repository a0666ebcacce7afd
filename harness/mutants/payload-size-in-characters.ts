import type { Mutant } from './types.ts';

/**
 * maxPayloadBytes measured in UTF-16 code units (the string's length) instead
 * of UTF-8 bytes, as a refactor that dropped Buffer.byteLength would: a
 * payload of accented text up to twice the limit is stored.
 */
export const payloadSizeInCharacters: Mutant = {
  breaks: 'a payload is measured in characters, so accented text up to twice maxPayloadBytes is stored',
  caughtBy: 'payload-size-refused',
  scenario: 'retry-storm',
  // The load generator enqueues from the scenario runner.
  runsIn: 'runner',
  changes: [{ kind: 'table', table: 'payload-size', entry: 'bytesOf', use: (text) => text.length }],
};
