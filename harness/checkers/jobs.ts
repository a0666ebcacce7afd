import { eventsOf, type EventOf, type FinalState, type HistoryEvent, type JobKind } from '../history.ts';
import { parseOpKey } from '../load/op-key.ts';

type FinalJob = FinalState['jobs'][number];

/** What the generator did with one operation, and which job (if any) it became. */
export interface OpRecord {
  op: number;
  kind?: JobKind;
  queue?: string;
  invoke?: EventOf<'enqueue:invoke'>;
  ok?: EventOf<'enqueue:ok'>;
  info?: EventOf<'enqueue:info'>;
  fail?: EventOf<'enqueue:fail'>;
  /** The row in the final state: by the acknowledged job id, else by the `op:<n>` idempotency key. */
  job?: FinalJob;
}

/**
 * Joins the history's enqueue operations to the final state's rows. Several
 * checkers need the same joins (op → kind, job id → kind), so they are made
 * once here.
 */
export class JobIndex {
  readonly ops = new Map<number, OpRecord>();
  readonly finalById = new Map<number, FinalJob>();
  readonly finalByKey = new Map<string, FinalJob>();
  private readonly opByJobId = new Map<number, number>();

  constructor(history: readonly HistoryEvent[], final: FinalState) {
    for (const j of final.jobs) {
      this.finalById.set(j.id, j);
      if (j.idempotencyKey) this.finalByKey.set(j.idempotencyKey, j);
    }
    const rec = (op: number): OpRecord => {
      let r = this.ops.get(op);
      if (!r) this.ops.set(op, (r = { op }));
      return r;
    };
    for (const e of history) {
      if (e.type === 'enqueue:invoke') Object.assign(rec(e.op), { invoke: e, kind: e.kind, queue: e.queue });
      else if (e.type === 'enqueue:ok') {
        rec(e.op).ok = e;
        this.opByJobId.set(e.jobId, e.op);
      } else if (e.type === 'enqueue:info') rec(e.op).info = e;
      else if (e.type === 'enqueue:fail') rec(e.op).fail = e;
    }
    for (const r of this.ops.values()) {
      r.job = (r.ok && this.finalById.get(r.ok.jobId)) || this.finalByKey.get(`op:${r.op}`);
      if (r.job) this.opByJobId.set(r.job.id, r.op);
    }
  }

  /** The op a job came from, by acknowledged id or by its `op:<n>` key. */
  opOf(jobId: number): OpRecord | undefined {
    const fromKey = parseOpKey(this.finalById.get(jobId)?.idempotencyKey);
    const op = this.opByJobId.get(jobId) ?? fromKey;
    return op === undefined ? undefined : this.ops.get(op);
  }

  /** A job's kind: the final row's own (read from its payload by the runner), else the kind its op was invoked with. */
  kindOf(jobId: number): string | undefined {
    return this.finalById.get(jobId)?.kind ?? this.opOf(jobId)?.kind;
  }
}

// cancelled: an operator ended the job on purpose (engine/control), not lost.
export const TERMINAL_STATES: ReadonlySet<string> = new Set(['done', 'dead', 'cancelled']);

export { eventsOf };
