/**
 * The harness's own reading of a 5-field cron expression, written from the
 * crontab(5) rules and sharing no code with engine/cron: each field becomes
 * the set of values it allows. Only what the oracle needs to judge the
 * scenarios' schedules: numbers, `*`, ranges, steps and lists (no names, no
 * aliases, no `L`/`W`/`#`); anything else is refused, naming the field.
 */
export interface CronFields {
  minutes: ReadonlySet<number>;
  hours: ReadonlySet<number>;
  daysOfMonth: ReadonlySet<number>;
  months: ReadonlySet<number>;
  /** 0 = Sunday (7 is read as 0). */
  daysOfWeek: ReadonlySet<number>;
  /** crontab(5): when both day fields are restricted, a day matches if either does. */
  domRestricted: boolean;
  dowRestricted: boolean;
  /** Every hour allowed: an interval schedule, which follows real elapsed time whatever the DST policy (docs/cron-dst.md). */
  everyHour: boolean;
}

const RANGES: [string, number, number][] = [
  ['minute', 0, 59],
  ['hour', 0, 23],
  ['day-of-month', 1, 31],
  ['month', 1, 12],
  ['day-of-week', 0, 7],
];

function parseField(text: string, name: string, lo: number, hi: number): Set<number> {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
    if (!m) throw new Error(`oracle cron ${name}: "${part}" is not a number, *, a range or a step`);
    const from = m[1] === '*' ? lo : Number(m[2]);
    const to = m[1] === '*' ? hi : m[3] !== undefined ? Number(m[3]) : m[4] !== undefined ? hi : from;
    const step = m[4] !== undefined ? Number(m[4]) : 1;
    if (from < lo || to > hi || from > to || step < 1) throw new Error(`oracle cron ${name}: "${part}" is outside ${lo}-${hi}`);
    for (let v = from; v <= to; v += step) out.add(v);
  }
  return out;
}

export function parseCronFields(expression: string): CronFields {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) throw new Error(`oracle cron: "${expression}" has ${parts.length} fields; expected 5`);
  const [minutes, hours, dom, months, dowRaw] = parts.map((p, i) => parseField(p, RANGES[i][0], RANGES[i][1], RANGES[i][2]));
  const dow = new Set([...dowRaw].map((d) => d % 7));
  return {
    minutes,
    hours,
    daysOfMonth: dom,
    months,
    daysOfWeek: dow,
    domRestricted: parts[2] !== '*',
    dowRestricted: parts[4] !== '*',
    everyHour: hours.size === 24,
  };
}

/** A local wall reading: what a clock on the wall of the zone shows. */
export interface WallReading {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  /** 0 = Sunday. */
  weekday: number;
}

export function matchesReading(f: CronFields, r: WallReading): boolean {
  if (!f.minutes.has(r.minute) || !f.hours.has(r.hour) || !f.months.has(r.month)) return false;
  const dom = f.daysOfMonth.has(r.day);
  const dow = f.daysOfWeek.has(r.weekday);
  if (f.domRestricted && f.dowRestricted) return dom || dow;
  return dom && dow;
}
