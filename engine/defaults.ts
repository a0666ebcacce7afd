import { RESCUER } from './worker/rescuer.ts';
import { WORKER } from './worker/options.ts';

/**
 * The defaults users import, units in the names. The worker's and the rescuer's are derived from their
 * declarations (engine/worker/options.ts WORKER, engine/worker/rescuer.ts RESCUER), where each is declared once;
 * the first three are enqueue's, which is a function, not a component.
 */
export const DEFAULTS = {
  /** Attempts before a job is dead-lettered (the source document's "commonly 5–8"). */
  maxAttempts: 6,
  /** Largest serialized payload accepted at enqueue, in bytes. */
  maxPayloadBytes: 256 * 1024,
  /** Priority when none is given; the range is 0 (lowest) to 9 (highest). */
  priority: 0,
  ...WORKER.defaults,
  restartGraceMs: RESCUER.defaults.restartGraceMs,
} as const;
