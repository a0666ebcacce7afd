import type { Mutant } from './types.ts';

/**
 * The sampler computes every queue's depth right, and the exporter sets the
 * depth gauge with its two labels the wrong way round (`{ queue: state,
 * state: queue }`): /metrics serves `stampede_queue_depth{queue="pending",
 * state="orders"}`, a dashboard filtered to a queue shows nothing, and
 * sampler-agrees (which reads the sampler's figures, not the scrape) cannot
 * see it. Runs in the scenario runner, whose RunSampler exports the gauges
 * Prometheus scrapes.
 */
export const depthLabelsSwapped: Mutant = {
  breaks: 'the queue-depth gauge is exported with its queue and state labels swapped, so a scrape files each queue\'s depth under the wrong queue',
  caughtBy: 'exported-metrics-agree',
  scenario: 'poison-herd',
  runsIn: 'runner',
  changes: [{ kind: 'gauge-relabel', metric: 'stampede_queue_depth', relabel: (l) => ({ ...l, queue: l.state, state: l.queue }) }],
};
