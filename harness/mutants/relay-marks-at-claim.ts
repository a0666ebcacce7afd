import { queryPatch, type Mutant } from './types.ts';

/**
 * The relay marks a row delivered when it claims it, before the send (an
 * "optimistic" relay that saves the second UPDATE): a delivery the receiver
 * refused, or one cut off by a killed relay, is never sent again, since the
 * failure report finds the row no longer pending. Runs in the relay processes.
 */
export const relayMarksAtClaim: Mutant = {
  breaks: 'the outbox relay marks a row delivered at claim, before the send, so a refused or cut-off delivery is never retried and its intent is lost',
  caughtBy: 'outbox-delivery',
  scenario: 'effects-pipeline',
  runsIn: 'relay',
  changes: [
    queryPatch('engine/effects/outbox.sql', 'ClaimIntents', [
      {
        find: "state = CASE WHEN o.attempts < o.max_attempts THEN 'pending' ELSE 'dead' END::stampede.outbox_state,",
        replace: "state = CASE WHEN o.attempts < o.max_attempts THEN 'delivered' ELSE 'dead' END::stampede.outbox_state,\n       delivered_at = now(),",
      },
    ]),
  ],
};
