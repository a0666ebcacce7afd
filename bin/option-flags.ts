// The CLI flags of a component's options, derived from its declaration (engine/options/declare.ts): the flag table
// entries bin/help.ts spreads into a command's flags (so --help shows the declared doc and default), and the reading
// of those flags into the component's options, with the range the declaration gives.
import { defaultShown, flagSets, type IntSpec, type OptionSpec, type OptionsDeclaration } from '../engine/options/declare.ts';
import { boundedIntFlag, intFlag } from './cli-args.ts';
import type { FlagSpec } from './usage.ts';

type Flagged<O> = { [K in keyof O as O[K] extends { flag: infer F extends string } ? F : never]: FlagSpec };
type ValueOf<S> = S extends { type: 'boolean' } ? boolean : S extends { type: 'string' | 'enum' } ? string : number;
type Read<O> = { -readonly [K in keyof O as O[K] extends { flag: string } ? K : never]?: ValueOf<O[K]> };

/** A period of whole days or hours in words, after its ms: ` (7 days)`. */
function inWords(ms: number): string {
  for (const [unit, size] of [['day', 86_400_000], ['hour', 3_600_000]] as const) {
    if (ms >= size && ms % size === 0) return ` (${ms / size} ${unit}${ms === size ? '' : 's'})`;
  }
  return '';
}

/** A bounded int's range as its flag's refusal says it: a period by its most (`at most 3600000 (1 hour)`), else min-max (`0-65535`). */
const bounds = (spec: IntSpec, max: number): string => (spec.unit === 'ms' ? `at most ${max}${inWords(max)}` : `${spec.min}-${max}`);

/** The least value a number flag takes: an int's min; a period of ms 1, or 0 where 0 is allowed. */
const least = (spec: OptionSpec): number => (spec.type === 'int' ? spec.min : spec.type === 'ms' && spec.zero ? 0 : 1);

/** The flag table entries of every declared option that has a flag, in declaration order. */
export function optionFlags<O extends Record<string, OptionSpec>>(decl: OptionsDeclaration<O>): Flagged<O> {
  return Object.fromEntries(
    Object.values(decl.options).flatMap((spec): [string, FlagSpec][] => {
      if (spec.flag === undefined) return [];
      // A switch on by default has a flag that turns it off (--no-rescue): its help says which way it goes.
      const turnsOff = spec.type === 'boolean' && !flagSets(spec);
      const help = `${spec.doc} (default ${defaultShown(spec)}${turnsOff ? '; this flag turns it off' : ''})`;
      if (spec.type === 'boolean') return [[spec.flag, { type: 'boolean', help }]];
      const value = spec.type === 'enum' ? spec.values.join('|') : spec.type === 'string' ? 'NAME' : 'N';
      return [[spec.flag, { type: 'string', value, help }]];
    }),
  ) as Flagged<O>;
}

/** The options the flags give, by the declaration: a number refused by its flag's name when out of range; absent, undefined. */
export function readOptionFlags<O extends Record<string, OptionSpec>>(decl: OptionsDeclaration<O>, values: Record<string, unknown>): Read<O> {
  const out: Record<string, string | number | boolean | undefined> = {};
  for (const [key, spec] of Object.entries(decl.options)) {
    if (spec.flag === undefined) continue;
    if (spec.type === 'boolean') out[key] = values[spec.flag] === true ? flagSets(spec) : undefined;
    else if (spec.type === 'string' || spec.type === 'enum') out[key] = values[spec.flag] as string | undefined;
    else if (spec.type === 'int' && spec.max !== undefined) out[key] = boundedIntFlag(values, spec.flag, spec.max, bounds(spec, spec.max));
    else out[key] = intFlag(values, spec.flag, least(spec));
  }
  return out as Read<O>;
}
