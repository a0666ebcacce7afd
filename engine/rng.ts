import seedrandom from 'seedrandom';

/**
 * The one source of randomness. Every component that draws random numbers
 * (backoff jitter, load arrival times, fault timelines, worker ids) takes an
 * Rng, so a scenario's seed reproduces its workload and its faults.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max] inclusive. */
  int(min: number, max: number): number;
  /** An independent stream derived from this seed and `label`, so adding draws in one component does not shift another's. */
  fork(label: string): Rng;
}

export class SeededRng implements Rng {
  private readonly prng: seedrandom.PRNG;

  constructor(private readonly seed: string | number) {
    this.prng = seedrandom(String(seed));
  }

  next(): number {
    return this.prng.quick();
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  fork(label: string): Rng {
    return new SeededRng(`${this.seed}/${label}`);
  }
}

/** A fresh seed for runs that were not given one; printed so the run can be replayed. */
export function randomSeed(): number {
  return Math.floor(Math.random() * 2 ** 31);
}
