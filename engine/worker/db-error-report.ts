import type { Events } from '../events.ts';
import { workerStrategies } from './strategies.ts';

/** Tells the events (the metric, the harness) that a statement failed for a reason of the database's; nothing for any other error. */
export function reportDbError(deps: { events: Events; workerId: string }, err: unknown, where: 'claim' | 'heartbeat' | 'result' | 'effect'): void {
  const kind = workerStrategies.databaseFault(err);
  if (!kind || !deps.events.has('db:error')) return;
  const code = (err as { code?: unknown } | null)?.code;
  deps.events.emit('db:error', { workerId: deps.workerId, kind, sqlstate: typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : null, where, error: (err as Error).message });
}
