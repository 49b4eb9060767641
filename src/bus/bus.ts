// The event bus: actions publish an event with the ids of the users who should get it, after
// their transaction committed; the delivery side (actors) subscribes. The in-process bus calls
// back inline; a NATS bus carries the same envelopes between processes.

export interface EventEnvelope {
  realmId: number;
  userIds: readonly number[];
  event: Record<string, unknown>;
}

export type EventHandler = (envelope: EventEnvelope) => void;

export interface EventBus {
  publish(envelope: EventEnvelope): void;
  subscribe(handler: EventHandler): () => void;
  close(): Promise<void>;
}
