import type { DstPolicy } from '../../engine/cron/policy.ts';

/**
 * DST nights whose expected instants are written out by hand from the zone rules:
 *   America/New_York  2026-03-08 02:00 EST -> 03:00 EDT (07:00Z); 2026-11-01 02:00 EDT -> 01:00 EST (06:00Z)
 *   Europe/Berlin     2026-03-29 02:00 CET -> 03:00 CEST (01:00Z); 2026-10-25 03:00 CEST -> 02:00 CET (01:00Z)
 *   Australia/Lord_Howe (30-minute shift, +10:30 <-> +11:00)
 *                     2026-04-05 02:00 LHDT -> 01:30 LHST (04-04 15:00Z); 2026-10-04 02:00 LHST -> 02:30 LHDT (10-03 15:30Z)
 */
export interface DstCase {
  name: string;
  cron: string;
  timezone: string;
  from: string;
  to: string;
  expected: Record<DstPolicy, string[]>;
}

/** Used by test/cron-occurrences.test.ts (pure) and test/cron-materializer-dst.test.ts (job rows in Postgres). */
export const DST_CASES: DstCase[] = [
  {
    name: 'New York spring forward: 02:30 does not exist on 03-08',
    cron: '30 2 * * *',
    timezone: 'America/New_York',
    from: '2026-03-07T00:00:00.000Z',
    to: '2026-03-10T00:00:00.000Z',
    expected: {
      'shift-first': ['2026-03-07T07:30:00.000Z', '2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z'],
      'shift-both': ['2026-03-07T07:30:00.000Z', '2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z'],
      'skip-first': ['2026-03-07T07:30:00.000Z', '2026-03-09T06:30:00.000Z'],
      'skip-both': ['2026-03-07T07:30:00.000Z', '2026-03-09T06:30:00.000Z'],
    },
  },
  {
    name: 'New York fall back: 01:30 happens twice on 11-01',
    cron: '30 1 * * *',
    timezone: 'America/New_York',
    from: '2026-10-31T00:00:00.000Z',
    to: '2026-11-03T00:00:00.000Z',
    expected: {
      'shift-first': ['2026-10-31T05:30:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z'],
      'shift-both': ['2026-10-31T05:30:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-01T06:30:00.000Z', '2026-11-02T06:30:00.000Z'],
      'skip-first': ['2026-10-31T05:30:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z'],
      'skip-both': ['2026-10-31T05:30:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-01T06:30:00.000Z', '2026-11-02T06:30:00.000Z'],
    },
  },
  {
    name: 'Berlin spring forward: 02:30 does not exist on 03-29',
    cron: '30 2 * * *',
    timezone: 'Europe/Berlin',
    from: '2026-03-28T00:00:00.000Z',
    to: '2026-03-31T00:00:00.000Z',
    expected: {
      'shift-first': ['2026-03-28T01:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z'],
      'shift-both': ['2026-03-28T01:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z'],
      'skip-first': ['2026-03-28T01:30:00.000Z', '2026-03-30T00:30:00.000Z'],
      'skip-both': ['2026-03-28T01:30:00.000Z', '2026-03-30T00:30:00.000Z'],
    },
  },
  {
    name: 'Berlin fall back: 02:30 happens twice on 10-25',
    cron: '30 2 * * *',
    timezone: 'Europe/Berlin',
    from: '2026-10-24T00:00:00.000Z',
    to: '2026-10-27T00:00:00.000Z',
    expected: {
      'shift-first': ['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z'],
      'shift-both': ['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-25T01:30:00.000Z', '2026-10-26T01:30:00.000Z'],
      'skip-first': ['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z'],
      'skip-both': ['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-25T01:30:00.000Z', '2026-10-26T01:30:00.000Z'],
    },
  },
  {
    name: 'Lord Howe spring forward: 02:15 does not exist on 10-04 (a 30-minute gap)',
    cron: '15 2 * * *',
    timezone: 'Australia/Lord_Howe',
    from: '2026-10-02T00:00:00.000Z',
    to: '2026-10-05T00:00:00.000Z',
    expected: {
      'shift-first': ['2026-10-02T15:45:00.000Z', '2026-10-03T15:30:00.000Z', '2026-10-04T15:15:00.000Z'],
      'shift-both': ['2026-10-02T15:45:00.000Z', '2026-10-03T15:30:00.000Z', '2026-10-04T15:15:00.000Z'],
      'skip-first': ['2026-10-02T15:45:00.000Z', '2026-10-04T15:15:00.000Z'],
      'skip-both': ['2026-10-02T15:45:00.000Z', '2026-10-04T15:15:00.000Z'],
    },
  },
  {
    name: 'Lord Howe fall back: 01:45 happens twice on 04-05 (a 30-minute overlap)',
    cron: '45 1 * * *',
    timezone: 'Australia/Lord_Howe',
    from: '2026-04-03T00:00:00.000Z',
    to: '2026-04-06T00:00:00.000Z',
    expected: {
      'shift-first': ['2026-04-03T14:45:00.000Z', '2026-04-04T14:45:00.000Z', '2026-04-05T15:15:00.000Z'],
      'shift-both': ['2026-04-03T14:45:00.000Z', '2026-04-04T14:45:00.000Z', '2026-04-04T15:15:00.000Z', '2026-04-05T15:15:00.000Z'],
      'skip-first': ['2026-04-03T14:45:00.000Z', '2026-04-04T14:45:00.000Z', '2026-04-05T15:15:00.000Z'],
      'skip-both': ['2026-04-03T14:45:00.000Z', '2026-04-04T14:45:00.000Z', '2026-04-04T15:15:00.000Z', '2026-04-05T15:15:00.000Z'],
    },
  },
];

