/**
 * The idempotency key the load generator gives the job of operation `op`.
 *
 * It is how the checkers find out what became of an enqueue whose outcome is
 * unknown (`enqueue:info`: the acknowledgement was lost): the job either
 * exists in the final state under this key or it does not, and enqueueing it
 * again with the same key could never have made two.
 */
export function opKey(op: number): string {
  return `op:${op}`;
}

/** The op number in an `op:<n>` key, or undefined for any other key. */
export function parseOpKey(key: string | null | undefined): number | undefined {
  if (!key) return undefined;
  const m = /^op:(\d+)$/.exec(key);
  return m ? Number(m[1]) : undefined;
}
