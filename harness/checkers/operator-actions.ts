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

/** The state a verb leaves a job it targets in (a redrive: each dead letter it moves). */
const EFFECT: Partial<Record<OperatorAction['verb'], string>> = { cancel: 'cancelled', 'dead-letter': 'dead', retry: 'pending', redrive: 'pending' };

/** A target a verb changed: a job or a queue, and its states before and after ("claimed -> cancelled"). */
export type Changed = ({ jobId: number } | { queue: string }) & { change: string };

/**
 * What a verb that should have done nothing did anyway, as its targets' states before and after it tell: a
 * job that became what the verb makes of one (and was not already), or a queue verb's queue whose state
 * (paused or running, its limits) moved. Workers move jobs too, but never into these states.
 */
export function changedAnyway(a: Pick<OperatorAction, 'verb' | 'queue' | 'jobIds' | 'before' | 'after'>): Changed[] {
  const effect = EFFECT[a.verb];
  const jobs = effect ? a.jobIds.filter((id) => a.after[id] === effect && a.before[id] !== effect).map((id) => ({ jobId: id, change: `${a.before[id]} -> ${a.after[id]}` })) : [];
  const queue = a.queue !== undefined && a.jobIds.length === 0 && a.after[a.queue] !== a.before[a.queue] ? [{ queue: a.queue, change: `${a.before[a.queue]} -> ${a.after[a.queue]}` }] : [];
  return [...jobs, ...queue];
}
