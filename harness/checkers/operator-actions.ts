import type { EventOf, HistoryEvent } from '../history.ts';

export type OperatorAction = EventOf<'operator:action'>;

/** The operator's verb calls of the run, in history order, with their index (for what came after each). */
export function operatorActions(history: readonly HistoryEvent[], verbs?: readonly OperatorAction['verb'][]): { a: OperatorAction; i: number }[] {
  const out: { a: OperatorAction; i: number }[] = [];
  history.forEach((e, i) => {
    if (e.type === 'operator:action' && (!verbs || verbs.includes(e.verb))) out.push({ a: e, i });
  });
  return out;
}
