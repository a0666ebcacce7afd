/**
 * The `stampede control` commands and how many arguments each takes after its
 * name (show: at most one queue). bin/control.ts runs them; the promise ledger
 * reads this table (harness/promises/documented.ts), so a new command cannot
 * ship without a promise that covers it.
 */
export const CONTROL_COMMANDS = {
  cancel: 1,
  retry: 1,
  kill: 1,
  'dead-letter': 1,
  redrive: 0,
  pause: 1,
  resume: 1,
  limit: 1,
  'key-weight': 3,
  show: 1,
  audit: 0,
} as const satisfies Record<string, number>;

export type ControlCommand = keyof typeof CONTROL_COMMANDS;
