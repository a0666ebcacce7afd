import type { Queryable } from '../../engine/db.ts';

export interface JobRow {
  id: number;
  state: string;
  attempts: number;
  crash_count: number;
  last_error: string | null;
  errors: { attempt: number; kind: string; error: string }[];
  run_at: Date;
}

export async function jobRow(db: Queryable, id: number): Promise<JobRow> {
  return (await db.query('SELECT * FROM stampede.jobs WHERE id = $1', [id])).rows[0];
}

export async function countByState(db: Queryable, queue: string): Promise<Record<string, number>> {
  const rows = (
    await db.query('SELECT state::text, count(*)::int AS n FROM stampede.jobs WHERE queue = $1 GROUP BY state', [queue])
  ).rows;
  return Object.fromEntries(rows.map((r) => [r.state, r.n]));
}
