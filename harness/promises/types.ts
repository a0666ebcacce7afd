import type { CheckerName } from '../checkers/index.ts';
import type { MutantName } from '../mutants/index.ts';

/**
 * The promise ledger's shape (docs/promises.md). One entry per promise the
 * project makes: what it says, where the documentation says it, what in the
 * documented surface it covers, and what vouches for it. The ledger is data;
 * test/promise-ledger.test.ts keeps it and the documentation equal, and the
 * gate judges each promise from its runs (harness/promises/judge.ts).
 */
export interface PromiseEntry {
  /** Short, stable, kebab-case: the gate's reports name promises by it. */
  id: string;
  /** The promise in one sentence, as a user would read it. */
  promise: string;
  /** Where the documentation makes it: an exact passage (whitespace and markdown emphasis aside) of that file. */
  documented: DocQuote[];
  /** What of the documented surface this promise stands for (docs/promises.md says how each list is derived). */
  covers: Covers;
  vouch: Vouch;
}

export interface DocQuote {
  file: 'README.md' | `docs/${string}.md`;
  quote: string;
}

/** A paragraph of the source document (shared/seed-job-scheduler.txt), 1 to 6. */
export type SeedParagraph = 1 | 2 | 3 | 4 | 5 | 6;

export interface Covers {
  /** Options, as `Component.option` (`Worker.leaseMs`, `Queue.maxStartsPerSecond`, `Schedule.dstPolicy=skip-both`). */
  options?: string[];
  /** Operator verbs, as `control.<verb>` (the engine's), `dashboard.<action>` or `cli.control.<command>`. */
  verbs?: string[];
  /** Paragraphs of the source document whose requirement this promise meets. */
  seed?: SeedParagraph[];
}

/**
 * What vouches for a promise:
 * - `gate`: the release gate. Each pair is a scenario that makes the
 *   promise's situation happen and an invariant of that scenario that judges
 *   it; together the pairs must judge at least `minJudged` events in one gate
 *   run, and each mutant must be caught (by `gate --mutants`) by one of the
 *   named invariants.
 * - `test`: a behaviour no scenario can show (a refusal at the API, a CLI's
 *   exit code): a test file against real Postgres, with the title of a test
 *   that asserts it and of its negative control (the same test against the
 *   broken behaviour, or the refusal's own test), and why the gate does not
 *   vouch for it (`notInGate`).
 * - `gap`: not vouched for yet, and why. The gate lists gaps by name; a gap is
 *   never counted as vouched.
 */
export type Vouch = GateVouch | TestVouch | GapVouch;

export interface GateVouch {
  by: 'gate';
  judgedBy: { scenario: string; invariant: CheckerName }[];
  /** Events that the pairs must judge, summed, in one gate run for the promise to count as vouched. */
  minJudged: number;
  /** Each caught, in `gate --mutants`, by one of `judgedBy`'s invariants. */
  mutants: MutantName[];
}

export interface TestVouch {
  by: 'test';
  file: `test/${string}.test.ts`;
  /** Titles (or unique parts of them) of the tests in `file` that assert it, its negative control among them. */
  tests: string[];
  /** Invariants of the harness itself whose checker `file` tests (a harness promise, such as a fault shown to bite). */
  invariants?: CheckerName[];
  /**
   * Why no gate scenario vouches for it: not a runtime behaviour under load (a refusal, bad input, a static
   * artifact, a setting read at start-up), or what a scenario would need that the harness does not have yet.
   */
  notInGate: string;
}

export interface GapVouch {
  by: 'gap';
  /** Why nothing vouches for it yet, and what would. */
  why: string;
}
