// Every long-running component refuses, in its constructor, an option its
// interface does not have (a misspelling that was dropped without a word: the
// component ran at its defaults) and a missing db.
import { afterAll, describe, expect, it } from 'vitest';
import { JobArchiver } from '../engine/archive/job-archiver.ts';
import { systemClock } from '../engine/clock.ts';
import { CronMaterializer } from '../engine/cron/materializer.ts';
import { Db } from '../engine/db.ts';
import { OutboxRelay } from '../engine/effects/relay.ts';
import { Pruner } from '../engine/effects/pruner.ts';
import { ValidationError } from '../engine/errors.ts';
import { Events } from '../engine/events.ts';
import { QueueStateSampler } from '../engine/metrics/queue-state-sampler.ts';
import { LeaseRescuer } from '../engine/worker/rescuer.ts';
import { Worker } from '../engine/worker/worker.ts';

// Never queried: a constructor that refuses must do so before it touches the database.
const db = new Db({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
afterAll(() => db.close());

const components: [string, (extra: Record<string, unknown>) => unknown][] = [
  ['Worker', (x) => new Worker({ db, handlers: { q: () => {} }, ...x } as any)],
  ['LeaseRescuer', (x) => new LeaseRescuer({ db, ...x } as any)],
  ['CronMaterializer', (x) => new CronMaterializer({ db, nodeId: 'n1', clock: systemClock, events: new Events(), ...x } as any)],
  ['OutboxRelay', (x) => new OutboxRelay({ db, deliver: async () => {}, ...x } as any)],
  ['Pruner', (x) => new Pruner({ db, ...x } as any)],
  ['JobArchiver', (x) => new JobArchiver({ db, ...x } as any)],
];

const refusal = (make: () => unknown) => {
  try {
    make();
  } catch (err) {
    return err;
  }
  return null;
};

describe('component options', () => {
  it.each(components)('%s refuses a misspelt option, naming it and the options it has', (name, make) => {
    const err = refusal(() => make({ intervalMS: 500 })) as ValidationError;
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.field).toBe('intervalMS');
    expect(err.message).toMatch(new RegExp(`^intervalMS: is not a ${name} option; expected one of .*\\bdb\\b`));
  });

  it.each(components)('%s refuses a missing db', (_name, make) => {
    const err = refusal(() => make({ db: undefined })) as ValidationError;
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.field).toBe('db');
  });

  it.each(components)('%s takes its documented options, and undefined for any of them', (_name, make) => {
    expect(refusal(() => make({ log: undefined, clock: systemClock }))).toBeNull();
  });

  it('QueueStateSampler refuses a misspelt option and a value out of its declared range, naming it', () => {
    expect(() => new QueueStateSampler(db, systemClock, null, { intervalMS: 500 } as any)).toThrow(/^intervalMS: is not a QueueStateSampler option; expected one of intervalMs, /);
    expect(() => new QueueStateSampler(db, systemClock, null, { doneCount: 'roughly' } as any)).toThrow(/^doneCount: "roughly" is not one of its values; expected 'estimate' or 'exact'/);
    expect(() => new QueueStateSampler(db, systemClock, null, { samplerId: '' })).toThrow(/^samplerId: {2}is not a name; expected a string of 1 to 200 characters/);
    expect(() => new QueueStateSampler(db, systemClock, null, { depthCapRows: 5 } as any)).toThrow(/^depthCapRows: was replaced by roundRowBudget/);
  });

  it('LeaseRescuer checks its values too', () => {
    expect(() => new LeaseRescuer({ db, batchSize: 0 })).toThrow(/^batchSize: 0 is not an integer in \[1,/);
    expect(() => new LeaseRescuer({ db, maxCrashes: 1.5 })).toThrow(/^maxCrashes: 1.5 is not an integer/);
  });
});
