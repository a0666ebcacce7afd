// A long-running component's options, declared once as data: each option's type, unit, default, bounds, one-line
// doc and CLI flag. The defaults objects, the validation and its messages, the list of accepted names, the CLI
// flags and their --help lines, the docs' option tables and the harness's worker flags are all derived from it,
// so adding an option is one entry here (docs/configuration.md says how). A schema library (zod, valibot, TypeBox)
// would do the same for a runtime dependency; these options are numbers and booleans with bounds, and the
// messages must stay the engine's ("field: value is not ..."), so a hundred lines of our own serve better.
import { ValidationError } from '../errors.ts';
import { checkComponentOptions, validateInt } from '../validate.ts';

interface Described {
  /** What it does, in one line: the --help line and the docs table's meaning. */
  doc: string;
  /** More for the docs table only: trade-offs, interactions. */
  note?: string;
  /** The unit of a number (`ms`, `days`, `jobs`, `rows`), shown in the docs table; units are also in the names. */
  unit?: string;
  /** The default as words, where it is computed or absent (`= concurrency`, `none`); else `default` is shown. */
  defaultText?: string;
  /** The CLI flag that sets it, without the dashes; none when no command takes it. */
  flag?: string;
  /** The worker only: the option can also be set per queue (WorkerOptions.queues). */
  perQueue?: true;
}

/** A whole number in [min, max], refused with validateInt's message ("0 is not an integer in [1, ...]"). */
export interface IntSpec extends Described {
  type: 'int';
  min: number;
  max?: number;
  default?: number;
}

/** A number of milliseconds that may have a fraction: positive, or non-negative with `zero`. */
export interface MsSpec extends Described {
  type: 'ms';
  zero?: true;
  default?: number;
}

/**
 * true or false. Its flag, when it has one, sets the value that is not the default: a switch that is off by default
 * is turned on by its flag (`--sample-queue-state`), one that is on by default is turned off by it, and its flag
 * says so (`--no-rescue`).
 */
export interface BooleanSpec extends Described {
  type: 'boolean';
  default?: boolean;
}

/** A name: a string of minLength to maxLength characters. */
export interface StringSpec extends Described {
  type: 'string';
  minLength: number;
  maxLength: number;
  default?: string;
}

/** One of a few words. */
export interface EnumSpec extends Described {
  type: 'enum';
  values: readonly string[];
  default?: string;
}

export type OptionSpec = IntSpec | MsSpec | BooleanSpec | StringSpec | EnumSpec;

type SpecFor<V> = [NonNullable<V>] extends [number]
  ? IntSpec | MsSpec
  : [NonNullable<V>] extends [boolean]
    ? BooleanSpec
    : [NonNullable<V>] extends [string]
      ? string extends NonNullable<V> ? StringSpec : EnumSpec
      : never;
type OptionTableFor<T> = { readonly [K in keyof T]?: SpecFor<T[K]> };
type DefaultsOf<O> = { readonly [K in keyof O as O[K] extends { default: unknown } ? K : never]: O[K] extends { default: infer D } ? D : never };

/** One component's declaration: its valued options, and the keys it takes that are wiring (db, clock, handlers). */
export interface OptionsDeclaration<O extends Record<string, OptionSpec> = Record<string, OptionSpec>> {
  /** The class name, as the refusals and the docs name it. */
  readonly component: string;
  readonly options: O;
  /** Keys the component takes that are not values with a default: seams and wiring, checked by the component. */
  readonly wiring: readonly string[];
  /** Every key the component takes, in declaration order: the valued options, then the wiring. */
  readonly names: readonly string[];
  readonly defaults: DefaultsOf<O>;
}

/**
 * Declares the options of a component whose options interface is T: `declareOptions<WorkerOptions>()('Worker',
 * {...}, [...wiring])`. It does not compile while a key of T is in neither the table nor the wiring, while the
 * table has a key T lacks, or while an option's spec does not fit its type (an int spec for a boolean).
 */
export function declareOptions<T>() {
  return <const O extends OptionTableFor<T>, const W extends readonly (keyof T & string)[]>(
    component: string,
    options: O & Record<Exclude<keyof O, keyof T>, never>,
    wiring: W & ([Exclude<keyof T, keyof O | W[number]>] extends [never] ? unknown : { missing: Exclude<keyof T, keyof O | W[number]> }),
  ): OptionsDeclaration<O & Record<string, OptionSpec>> => {
    const table = options as unknown as Record<string, OptionSpec>;
    const defaults = Object.fromEntries(Object.entries(table).flatMap(([k, s]) => (s.default === undefined ? [] : [[k, s.default]])));
    return Object.freeze({
      component,
      options: options as O & Record<string, OptionSpec>,
      wiring,
      names: [...Object.keys(table), ...wiring],
      defaults: Object.freeze(defaults) as DefaultsOf<O & Record<string, OptionSpec>>,
    });
  };
}

/** Refuses a value outside its spec, naming `field`. */
export function checkOption(spec: OptionSpec, value: unknown, field: string): void {
  switch (spec.type) {
    case 'int':
      validateInt(value, field, spec.min, spec.max);
      return;
    case 'ms':
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!spec.zero && value === 0)) {
        throw new ValidationError(field, `${String(value)} is not a ${spec.zero ? 'non-negative' : 'positive'} number of milliseconds`);
      }
      return;
    case 'boolean':
      if (typeof value !== 'boolean') throw new ValidationError(field, `${String(value)} is not a boolean; expected true or false`);
      return;
    case 'string':
      if (typeof value !== 'string' || value.length < spec.minLength || value.length > spec.maxLength) {
        throw new ValidationError(field, `${String(value)} is not a name; expected a string of ${spec.minLength} to ${spec.maxLength} characters`);
      }
      return;
    case 'enum':
      if (typeof value !== 'string' || !spec.values.includes(value)) {
        throw new ValidationError(field, `"${String(value)}" is not one of its values; expected ${spec.values.map((v) => `'${v}'`).join(' or ')}`);
      }
  }
}

/** Checks every declared option `o` gives (undefined is absent), each named `${prefix}${key}`; `only` narrows the keys. */
export function checkOptions(decl: OptionsDeclaration, o: object, prefix = '', only: (spec: OptionSpec) => boolean = () => true): void {
  for (const [key, spec] of Object.entries(decl.options)) {
    const value = (o as Record<string, unknown>)[key];
    if (value !== undefined && only(spec)) checkOption(spec, value, `${prefix}${key}`);
  }
}

/**
 * A component's options as its constructor checks them before touching the database: an object with a working db,
 * no key the declaration lacks (the refusal lists the ones it has), and every declared value within its bounds.
 */
export function validateDeclared(decl: OptionsDeclaration, o: unknown): void {
  checkComponentOptions(o, decl.names, decl.component);
  checkOptions(decl, o as object);
}

/** The default as the --help and the docs show it: the words of a computed one, or the value. */
export function defaultShown(spec: OptionSpec, format: (n: number) => string = String): string {
  if (spec.defaultText !== undefined) return spec.defaultText;
  if (spec.default === undefined) return 'none';
  return typeof spec.default === 'number' ? format(spec.default) : String(spec.default);
}

/** What a boolean option's flag sets it to: the value that is not its default (`--no-rescue` gives rescue: false). */
export function flagSets(spec: BooleanSpec): boolean {
  return !(spec.default ?? false);
}

/**
 * The command-line arguments that give a process these option values, by the declared flags (the harness's fleet
 * builds a worker's arguments so). A value of null or undefined is left out, and so is a boolean at its default
 * (only the other value has a flag); a key the declaration lacks, or one without a flag, is refused: a setting a
 * process cannot be given must not be dropped without a word.
 */
export function optionArgv(decl: OptionsDeclaration, values: Readonly<Record<string, string | number | boolean | null | undefined>>): string[] {
  return Object.entries(values).flatMap(([key, value]) => {
    const spec = decl.options[key];
    const flag = spec?.flag;
    if (flag === undefined) throw new ValidationError(key, `is not a ${decl.component} option with a CLI flag; expected one of ${flagged(decl).join(', ')}`);
    if (value === null || value === undefined) return [];
    if (spec.type === 'boolean') return value === flagSets(spec) ? [`--${flag}`] : [];
    return [`--${flag}`, String(value)];
  });
}

/** The options that have a CLI flag. */
export function flagged(decl: OptionsDeclaration): string[] {
  return Object.keys(decl.options).filter((k) => decl.options[k].flag !== undefined);
}
