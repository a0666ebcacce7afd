import type { Scenario } from '../harness/scenario.ts';
import poisonHerd from './poison-herd.ts';
import steady from './steady.ts';

/** The built-in scenarios by name: `npm run scenario <name>`. */
export const SCENARIOS: Record<string, Scenario> = Object.fromEntries([steady, poisonHerd].map((s) => [s.name, s]));
