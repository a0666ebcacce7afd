// Exactly-once effects: the outbox, its relay, and the pruner of the dedup store.
export {
  recordIntent,
  outboxDepth,
  listOutbox,
  redriveOutbox,
  DEFAULT_OUTBOX_MAX_ATTEMPTS,
  type Intent,
  type RecordedIntent,
  type OutboxRow,
  type OutboxEntry,
  type OutboxState,
} from './outbox.ts';
export { OutboxRelay, RELAY_DEFAULTS, validateRelayOptions, type OutboxRelayOptions, type Deliver, type DeliveryContext } from './relay.ts';
export { Pruner, PRUNER_DEFAULTS, type PrunerOptions } from './pruner.ts';
