// The event map (engine/events.ts) is the one declaration of every event: what is emitted or reported must be
// declared there (or, for the harness handler's reports, in HandlerReports), the emitters it names must be the
// ones that emit it (the processes forward by them), and the history derives its records instead of restating them.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENGINE_EVENTS, eventsEmittedBy, type Emitter, type EventName, type NodeEvents } from '../engine/events.ts';
import type { HandlerReports } from '../harness/handlers.ts';
import { fromReport, isRecorded, type EventOf } from '../harness/history.ts';

const ROOT = join(import.meta.dirname, '..');

/** What a node reports beside the engine's events: a value per name, so the compiler keeps this equal to the types. */
const OTHER_REPORTS = { 'worker:settings': true, 'fault:bit': true, 'effect:started': true, 'effect:applied': true, 'otel:span': true, 'otel:metrics': true } satisfies Record<
  Exclude<keyof NodeEvents, EventName> | keyof HandlerReports,
  true
>;

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

/** Every `emit('a:b'`, `report('a:b'` and `eventMessage('a:b'` in the engine, the binaries and the harness, with its file. */
function emitted(): { file: string; name: string }[] {
  const out: { file: string; name: string }[] = [];
  for (const file of [...sources('engine'), ...sources('bin'), ...sources('harness')]) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const m of text.matchAll(/\b(?:emit|report|eventMessage)(?:<[^>]*>)?\(\s*'([a-z-]+:[a-z-]+)'/g)) out.push({ file, name: m[1] });
  }
  return out;
}

/** Which component's files emit which events: the map's `by` must agree, or a process would not forward them. */
const EMITTER_OF_FILE: [RegExp, Emitter[]][] = [
  [/^engine\/worker\/rescuer\.ts$/, ['rescuer']],
  [/^engine\/worker\//, ['worker']],
  [/^engine\/cron\//, ['cron']],
  [/^engine\/effects\/relay\.ts$/, ['relay']],
  [/^engine\/effects\/pruner\.ts$/, ['pruner']],
  [/^engine\/supervisor\/supervisor\.ts$/, ['supervisor']],
];

describe('the event map', () => {
  const found = emitted();

  it('declares every event that is emitted or reported', () => {
    expect(found.length).toBeGreaterThan(20);
    const declared = new Set<string>([...Object.keys(ENGINE_EVENTS), ...Object.keys(OTHER_REPORTS)]);
    expect(found.filter((e) => !declared.has(e.name))).toEqual([]);
  });

  it('names the component that emits each event, so its process forwards it', () => {
    const wrong: string[] = [];
    for (const { file, name } of found) {
      const emitters = EMITTER_OF_FILE.find(([re]) => re.test(file))?.[1];
      if (!emitters || !Object.hasOwn(ENGINE_EVENTS, name)) continue;
      if (!eventsEmittedBy(...emitters).includes(name as EventName)) wrong.push(`${file}: ${name} (by ${emitters.join(', ')})`);
    }
    expect(wrong).toEqual([]);
    // A worker process forwards what its worker and rescuer emit; every one of those is emitted somewhere in them.
    const byWorkerFiles = new Set(found.filter((e) => e.file.startsWith('engine/worker/')).map((e) => e.name));
    expect(eventsEmittedBy('worker', 'rescuer').filter((n) => !byWorkerFiles.has(n))).toEqual([]);
  });

  it('is not restated by the history: no engine event or node report is spelled out as a history type', () => {
    const history = readFileSync(join(ROOT, 'harness/history.ts'), 'utf8');
    const restated = [...history.matchAll(/type: '([a-z-]+:[a-z-]+)'/g)]
      .map((m) => m[1])
      .filter((name) => (Object.hasOwn(ENGINE_EVENTS, name) || Object.hasOwn(OTHER_REPORTS, name)) && isRecorded(name as keyof NodeEvents));
    expect(restated).toEqual([]);
    // Nor is the list of events a process forwards written out anywhere: it is derived (eventsEmittedBy).
    for (const file of ['bin/worker.ts', 'bin/relay.ts', 'harness/runner/fleet.ts']) {
      expect(readFileSync(join(ROOT, file), 'utf8'), relative(ROOT, file)).not.toMatch(/'job:started',\s*\n?\s*'job:completed'/);
    }
  });

  it('derives a history record from a report: the database instant becomes dbTime, other db… fields lose the prefix', () => {
    const claimed: EventOf<'job:claimed'> = {
      t: 5,
      node: 'worker-0',
      ...fromReport('job:claimed', {
        jobId: 1,
        queue: 'q',
        priority: 0,
        attempt: 1,
        workerId: 'w',
        runAt: 10,
        dbClaimedAt: 20,
        dbTakenAt: 25,
        crashCount: 0,
        dbLeaseExpiresAt: 30,
        fairnessKey: null,
        leaseToken: 'tok-1',
      }),
    };
    expect(claimed).toEqual({ t: 5, node: 'worker-0', type: 'job:claimed', jobId: 1, queue: 'q', priority: 0, attempt: 1, workerId: 'w', runAt: 10, dbTime: 20, takenAt: 25, crashCount: 0, leaseExpiresAt: 30, fairnessKey: null, leaseToken: 'tok-1' });
    expect(fromReport('lease:rescued', { jobId: 1, queue: 'q', attempts: 2, crashCount: 1, dead: false, crashed: true, owner: 'w', dbRescuedAt: 40, dbLeaseExpiredAt: 35 })).toEqual({
      type: 'lease:rescued',
      jobId: 1,
      queue: 'q',
      attempts: 2,
      crashCount: 1,
      dead: false,
      crashed: true,
      owner: 'w',
      dbTime: 40,
      leaseExpiredAt: 35,
    });
  });
});
