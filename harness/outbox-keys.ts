/**
 * The outbox intent an `outbox` job of the harness records (harness/handlers.ts)
 * for its effect key: one intent per effect, keyed so the checker can join the
 * sink's receipts to the committed effects.
 */
export function intentKeyOf(effectKey: string): string {
  return `intent:${effectKey}`;
}
