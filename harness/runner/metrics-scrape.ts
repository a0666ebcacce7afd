import type { RedCounts } from '../history.ts';

/** The RED series a worker's /metrics serves, by metric name: which count each feeds. */
const RED_SERIES: Record<string, keyof Omit<RedCounts, 'durations'>> = {
  stampede_jobs_claimed_total: 'claimed',
  stampede_jobs_completed_total: 'completed',
  stampede_jobs_failed_total: 'failed',
  stampede_leases_lost_total: 'leasesLost',
  stampede_jobs_dead_lettered_total: 'deadLettered',
  stampede_leases_expired_total: 'leasesExpired',
};
const DURATION_COUNT = 'stampede_job_duration_seconds_count';

/**
 * The RED counts in a Prometheus text exposition, summed per queue over their
 * other labels (a failure's reason, a lost lease's phase). Pure. A labelled
 * sample line is `name{a="x",b="y"} value`; queue names need no escaping
 * (engine/validate.ts), and nothing else here is read from a label.
 */
export function redCounts(text: string): RedCounts {
  const out: Required<RedCounts> = { claimed: {}, completed: {}, failed: {}, leasesLost: {}, durations: {}, deadLettered: {}, leasesExpired: {} };
  const add = (into: Record<string, number>, queue: string, n: number) => (into[queue] = (into[queue] ?? 0) + n);
  for (const line of text.split('\n')) {
    const m = /^(\w+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[2].matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    const n = Number(m[3]);
    if (labels.queue === undefined || !Number.isFinite(n)) continue;
    const count = RED_SERIES[m[1]];
    if (count) add(out[count], labels.queue, n);
    else if (m[1] === DURATION_COUNT) add((out.durations[labels.outcome] ??= {}), labels.queue, n);
  }
  return out;
}
