// Records what actions publish on the bus, for tests that check events at the bus level.
import type { App } from '../../src/app.ts';
import type { EventEnvelope } from '../../src/bus/bus.ts';
import type { QueueOptions } from '../../actors/queue-options.ts';
import { isEventOf, schemaKey, type ChatEvent, type ChatEventType, type EventOf } from '../../src/events/schemas.ts';

/** The event as its type, failing the test when it is another. */
export function eventAs<T extends ChatEventType, O extends string = never>(event: ChatEvent, type: T, op?: O): EventOf<T, O> {
  if (!isEventOf(event, type, op)) throw new Error(`expected a ${type}${op ? `/${op}` : ''} event, got ${schemaKey(event)}`);
  return event;
}

/** The event's op, if its type has ops. */
export const opOf = (event: ChatEvent): string | undefined => ('op' in event ? event.op : undefined);

/** A queue registered with every option at its default: all events, no narrow, rendered content. */
export const plainQueueOptions: QueueOptions = {
  eventTypes: null,
  narrow: [],
  allPublicStreams: false,
  applyMarkdown: true,
  clientGravatar: false,
  capabilities: [],
  idleTimeoutSecs: 600,
};

/**
 * A message event's message with only the fields a delivery test sets: queues pass a message on
 * without reading more than its recipient fields, and these tests measure sizes they control.
 */
export function partialMessage(message: Partial<EventOf<'message'>['message']> & { id: number }): EventOf<'message'>['message'] {
  return message as EventOf<'message'>['message'];
}

export function captureEvents(app: App, realmId: number) {
  const envelopes: EventEnvelope[] = [];
  const stop = app.bus.subscribe((e) => {
    if (e.realmId === realmId) envelopes.push(e);
  });
  return {
    envelopes,
    stop,
    /** Events of one type, each with the user ids it was addressed to. */
    ofType: <T extends ChatEventType>(type: T) => envelopes.filter((e): e is EventEnvelope & { event: EventOf<T> } => isEventOf(e.event, type)),
  };
}
