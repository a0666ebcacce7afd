import { defineScenario } from '../harness/scenario.ts';
import { SCHEDULED_JOB } from './background.ts';

/**
 * The person on call at work during an incident, through the engine's API,
 * through its dashboard (served by the runner for the run, its POST actions
 * with the session's CSRF token) and through `stampede control` (its own
 * process, exit status and output read as a shell would), while workers are
 * killed:
 *
 * - two poison payloads crash-loop and are convicted ("crashed its worker
 *   2 times"); later the operator redrives exactly those from the dashboard
 *   (by reason) while a worker is killed: they rerun from a fresh budget and
 *   are convicted again, and the other dead letters stay put;
 * - a poison arrives in `ops` and the operator pauses `ops` as a worker takes
 *   it: the worker dies and the job falls due again as a suspect while the
 *   queue is paused, which nothing may claim until the resume;
 * - running (slow) jobs, pending (delayed) ones and done ones are cancelled,
 *   the first while a worker is killed: the running ones must be aborted, and
 *   the done ones refused; jobs are dead-lettered by hand, failed ones in
 *   backoff and dead ones retried, and the limits of `orders` set and lifted;
 * - the archiver runs throughout, beside the dead and cancelled jobs it must
 *   leave where they are;
 * - the workers elect one queue-state sampler, and a tab stays open on the
 *   dashboard's queues page (read every 2 s): it must show the sampler's
 *   round while it is fresh and run its own only when none is, and mark a
 *   queue over its 60 s SLO exactly when it is: a backlog replayed late
 *   into the paused `ops`, dated 90 s back, puts it over until the resume;
 * - a scheduler node materializes two minutely schedules into `ops`, and the
 *   operator pauses one of them from the dashboard for 8 s; meanwhile the
 *   node's clock is stepped a minute ahead (within its skew tolerance), so the
 *   next minute enters its lookahead while the schedule is paused: its twin's
 *   occurrence is written then, the paused one's only after the resume.
 *
 * Every verb is recorded with its targets, its answer and its targets' states
 * before and after; cancel-honoured, redrive-reruns, operator-audited,
 * paused-queue-idle, dead-letter-rows, archive-once, dashboard-shows-fresh-round and
 * schedule-paused-idle judge them. Before each job or queue verb issued through the
 * dashboard, an intruder sends the same one forged (by GET, with no session,
 * without the CSRF token or with another, from a foreign Origin):
 * dashboard-refuses-forged judges that each was refused and changed nothing;
 * cli-verbs that each command line did its verb (exit 0) or refused it
 * naming the target and changing nothing (exit 2), and that `show` and
 * `audit` show a limit set there; cli-refuses-bad-input that each of an
 * operator's typos there was refused naming the bad input, changing nothing;
 * dashboard-bound-as-told that the `stampede dashboard` an operator starts
 * there with no --host listens on 127.0.0.1 at the port asked, behind its
 * random token, and on no other address of the machine.
 */
export default defineScenario({
  name: 'operator-chaos',
  description:
    "An operator cancels running, pending and done jobs, dead-letters and retries by hand, redrives crash-loop convictions by reason, sets limits, pauses a queue holding a suspect and a schedule whose next minute comes due, through the API and the dashboard, while workers are killed: cancels are final, redrives rerun from a fresh budget, every change is audited, the paused suspect waits, the paused schedule writes nothing until resumed, the archiver leaves dead jobs, and the queues page shows the elected sampler's fresh round.",
  seed: 211,
  durationS: 30,
  load: { model: 'poisson', rate: 40 },
  workers: 3,
  // 4 slots: a poison's crash takes few innocent jobs with it, so their runs alone as suspects are over soon.
  concurrency: 4,
  lanes: [
    { queue: 'orders', priority: 0, share: 3 },
    { queue: 'ops', priority: 0, share: 1 },
  ],
  mix: [
    { kind: 'normal', share: 8, durationMs: { dist: 'lognormal', medianMs: 5, p99Ms: 50 } },
    // Running for seconds: what a cancel or a dead-letter by hand finds still running, heartbeating every 500 ms.
    { kind: 'slow', share: 0.3, durationMs: { dist: 'uniform', minMs: 2_000, maxMs: 4_000 }, lanes: ['orders'] },
    // Failed jobs waiting out a backoff (retry now), and jobs that run out of their 3 attempts (retry a dead one).
    // One planned failure: a kill during the second attempt still leaves the third of the budget of 3.
    { kind: 'flaky', share: 0.5, failAttempts: 1, lanes: ['orders'] },
    { kind: 'failing', count: 12, lanes: ['orders'] },
  ],
  // Pending jobs for the cancels and the dead-letter by hand to find: due 24-29 s into the load.
  preload: [{ origin: 'delayed', count: 30, queue: 'orders', dueInS: { fromS: 24, toS: 29 } }],
  // maxCrashes 2: the poisons are convicted well before the redrive.
  engine: { leaseMs: 2_000, heartbeatMs: 500, pollMs: 100, rescueIntervalMs: 500, maxAttempts: 3, maxCrashes: 2, backoffBaseMs: 1_000, backoffCapMs: 4_000 },
  archiver: { archiveAfterMs: 2_000, intervalMs: 500 },
  // Cron's finest step is a minute: a 30 s run sees at most one minute enter a node's lookahead by itself, so
  // the scheduler's clock is stepped a minute ahead during the schedule's pause (clock-jump below).
  scheduler: {
    nodes: [{ skewMs: 0 }],
    schedules: [
      { id: 'ops-digest', cron: '* * * * *', queue: 'ops', payload: SCHEDULED_JOB },
      { id: 'ops-heartbeat', cron: '* * * * *', queue: 'ops', payload: SCHEDULED_JOB },
    ],
  },
  faults: [
    // At the start, so its suspect heads the suspects' line (oldest first, then by id) with next to nothing in flight
    // beside it: it falls due 3-8 s into the pause (lease, then the rescuer's verdict on the dead holder's liveness),
    // and a worker drains for a suspect within 2 s, so a claim path that ignored the pause reaches it before the resume.
    // Paused and resumed at the command line (stampede control pause ops --new, resume ops).
    { fault: 'queue-pause', atS: 0, forS: 16, queue: 'ops', suspect: true, via: 'cli' },
    // A backlog replayed late into the paused ops, dated 90 s back: ops is over the dashboard's 60 s SLO from then
    // until the resume (the open tab's reads at 4-16 s), orders stays under it (dashboard-slo-mark).
    { fault: 'thundering-herd', atS: 4, count: 5, queue: 'ops', dueAgoS: 90 },
    // An operator starts `stampede dashboard` at the command line (no --host, a free --port the harness chose, no
    // token): it must print 127.0.0.1 and that port, serve the page with the printed token only, and listen on no
    // other address of the machine; then SIGTERM (dashboard-bound-as-told).
    { fault: 'dashboard-cli', atS: 3 },
    { fault: 'poison-pill', atS: 5, count: 2, queue: 'orders', maxAttempts: 25 },
    { fault: 'dead-letter', atS: 6, running: 1, pending: 1, queue: 'orders', via: 'dashboard' },
    { fault: 'cancel', atS: 8, running: 2, done: 1, queue: 'orders', via: 'dashboard' },
    // Typos at the command line (the id of the job dead-lettered by hand at 6 s with a stray letter, a zero limit, a
    // misspelt command, a weight of 0, a pause without --by): each refused, exit 2, naming the bad input, nothing changed.
    { fault: 'cli-typos', atS: 9, queue: 'orders' },
    // One minute ahead, within the node's 120 s skew tolerance: exactly one more minute of each schedule enters its
    // lookahead, while ops-digest is paused (10-18 s). ops-heartbeat's is written at once, ops-digest's after the resume.
    { fault: 'schedule-pause', atS: 10, forS: 8, schedule: 'ops-digest', via: 'dashboard' },
    { fault: 'clock-jump', atS: 13, target: 'scheduler:0', jumpMs: 60_000 },
    { fault: 'retry', atS: 13, failed: 2, dead: 2, queue: 'orders' },
    // Through the command line (stampede control, its own process, as an operator's shell runs it), besides the pause
    // of ops: a running job killed and a pending one dead-lettered; a dead one retried; limits set (and read back with
    // show and audit); a pending job cancelled and a done one's cancel refused (exit 2).
    { fault: 'dead-letter', atS: 15, running: 1, pending: 1, queue: 'orders', via: 'cli' },
    { fault: 'cancel', atS: 16, pending: 1, done: 1, queue: 'orders', via: 'cli' },
    { fault: 'set-limits', atS: 18, queue: 'orders', maxInFlight: 8, via: 'dashboard' },
    { fault: 'retry', atS: 19, dead: 1, queue: 'orders', via: 'cli' },
    { fault: 'set-limits', atS: 20, queue: 'orders', maxInFlight: 12, maxStartsPerSecond: 400, via: 'cli' },
    // Each kill is armed first at its instant (timeline order) and lands as the worker starts its next handler, so the
    // verb beside it is issued with a worker just killed; by then the suspects of the poisons' crashes have run (a
    // suspect killed again would be convicted).
    { fault: 'worker-kill', atS: 22, point: 'mid-handler' },
    { fault: 'cancel', atS: 22, running: 3, pending: 3, done: 2, queue: 'orders' },
    { fault: 'worker-kill', atS: 25, point: 'mid-handler' },
    { fault: 'redrive', atS: 25, queue: 'orders', matching: 'crashed its worker', via: 'dashboard' },
    { fault: 'set-limits', atS: 27, queue: 'orders' },
    { fault: 'retry', atS: 28, dead: 2, queue: 'orders', via: 'dashboard' },
    // The jobs killed and dead-lettered at the command line (15 s) redriven there by their reason: they rerun.
    { fault: 'redrive', atS: 29, queue: 'orders', matching: 'dead-lettered by oncall-cli', via: 'cli' },
  ],
  checkers: {
    'exactly-one-effect': false,
    'cancel-honoured': true,
    'redrive-reruns': true,
    'operator-audited': true,
    'paused-queue-idle': true,
    'dead-letter-rows': true,
    // Convictions, budgets run out and dead-letters by hand, each coded for its path (crash_loop, attempts_exhausted, operator).
    'dead-letter-codes': true,
    'archive-once': true,
    'dashboard-shows-fresh-round': true,
    // Each dashboard action is preceded by the same one forged five ways (by GET, no session, no or another CSRF
    // token, a foreign Origin): about 45 forged requests, each refused and changing nothing.
    'dashboard-refuses-forged': true,
    'schedule-paused-idle': true,
    'cli-verbs': true,
    'dashboard-slo-mark': true,
    'cli-refuses-bad-input': true,
    'dashboard-bound-as-told': true,
  },
  // The workers elect a queue-state sampler, as a deployment's do (--sample-queue-state), and the runner keeps a tab
  // open on the dashboard's queues page: it must show the sampler's fresh round, and run its own only when none is
  // fresh (before the first round; while a killed leader's round has gone stale).
  sampleQueueState: true,
  drainTimeoutS: 40,
});
