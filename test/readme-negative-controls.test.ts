// The README's "Negative controls" table is the registry, row for row, and
// every invariant that can fail has a mutant the gate shows it catching.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHECKERS } from '../harness/checkers/index.ts';
import { MUTANTS } from '../harness/mutants/index.ts';
import { LEDGER } from '../harness/promises/ledger.ts';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const section = readme.split('## Negative controls')[1]?.split('\n## ')[0] ?? '';
const rows = [...section.matchAll(/^\| `([\w-]+)` \| (?:`([\w-]+)`|\(none yet[^|]*\)) \| `([\w-]+)` \|/gm)].map((m) => ({ mutant: m[1], caughtBy: m[2] ?? null, scenario: m[3] }));

// Checkers that judge whether a run could judge at all: they answer inconclusive, never false.
const META = new Set(['queue-drained', 'faults-exercised']);
// Invariants whose negative control is a peer's known bug (docs/peers.md), run by a test the ledger names: not a mutant of stampede.
const PEER_CONTROLLED = new Set(LEDGER.flatMap((e) => (e.vouch.by === 'test' && e.vouch.file.startsWith('test/peers') ? (e.vouch.invariants ?? []) : [])));

describe('negative controls', () => {
  it("the README's table lists every mutant of the registry with the invariant and scenario it names", () => {
    expect(rows).toEqual(Object.entries(MUTANTS).map(([mutant, m]) => ({ mutant, caughtBy: m.caughtBy, scenario: m.scenario })));
  });

  it('every invariant that can fail has at least one mutant the gate runs against it', () => {
    const caught = new Set(Object.values(MUTANTS).map((m) => m.caughtBy));
    const without = Object.keys(CHECKERS).filter((name) => !META.has(name) && !PEER_CONTROLLED.has(name as never) && !caught.has(name as never));
    expect(without).toEqual([]);
    expect([...PEER_CONTROLLED]).toEqual(['released-at-stop']);
    // lease-fencing's control needs a holder that still renews after a takeover: a worker whose clock runs slow.
    expect(MUTANTS['renewal-unfenced']).toMatchObject({ caughtBy: 'lease-fencing', scenario: 'slow-clock' });
  });
});
