// Reading an event queue by long-polling (GET /events): answer at once with what the queue holds,
// or park until the next flush or heartbeat. The same for a poll that reached this node directly
// and one another node of the cluster passed on (queue-proxy.ts).
import { z } from 'zod';
import { QueueError, type Consumer, type EventQueue } from '../../actors/queue.ts';
import type { App } from '../app.ts';
import { badRequest } from '../errors.ts';
import { ANSWER_PENDING, JsonFields } from '../http/route.ts';

/** An event as a queue delivers it (GET /events, the WebSocket gateway). */
export const deliveredEvent = z.looseObject({ id: z.number().int(), type: z.string() }).meta({
  id: 'DeliveredEvent',
  description: "One of the Event.* schemas as its queue shaped it for the client's options, with the event's id in the queue",
});

/** What a queue id is made of (the registry's: a node's id, a colon, a UUID), so it needs no escaping. */
const PLAIN_QUEUE_ID = /^[\w:-]+$/;

export function pollAnswer(queue: EventQueue, events: string): JsonFields {
  const id = PLAIN_QUEUE_ID.test(queue.id) ? `"${queue.id}"` : JSON.stringify(queue.id);
  return new JsonFields(`"events":${events},"queue_id":${id}`);
}

/**
 * A parked GET /events: answered with whatever the queue holds when it is flushed or closed. A
 * class, so the thousands parked at once are one small object each (an object literal's methods
 * were two more closures a poll, which every scavenge copied while it waited).
 */
class ParkedPoll implements Consumer {
  readonly kind = 'poll';

  constructor(private readonly respond: (result: JsonFields) => void) {}

  flush(queue: EventQueue): boolean {
    this.respond(pollAnswer(queue, queue.pendingJson()));
    return true;
  }

  heartbeat(queue: EventQueue, json: string): boolean {
    this.respond(pollAnswer(queue, `[${json}]`));
    return true;
  }

  close(queue: EventQueue): void {
    this.respond(pollAnswer(queue, '[]'));
  }
}

/** Acknowledges what the client has (`last_event_id`), with Zulip's errors for ids that make no sense. */
export function acknowledge(queue: EventQueue, lastEventId: number): void {
  try {
    queue.prune(lastEventId);
  } catch (err) {
    if (err instanceof QueueError) throw badRequest(err.message);
    throw err;
  }
}

export interface PollRequest {
  dontBlock: boolean;
  /** The queue was made by this request (GET /events without a queue id): its id goes in the answer. */
  created?: boolean;
  onAbort?: (cb: () => void) => void;
  /** Answers a parked poll in the flush that completes it, without a promise. */
  answer?: (result: JsonFields) => void;
}

/**
 * The answer to a poll of `queue`, acknowledged already: now, or once something arrives. Parked
 * with an `answer` callback, the poll is answered through it and this returns ANSWER_PENDING
 * (no promise waits for it); without one (a poll passed on by another node), a promise.
 */
export function pollQueue(app: App, queue: EventQueue, request: PollRequest & { answer: (result: JsonFields) => void }): JsonFields | typeof ANSWER_PENDING;
export function pollQueue(app: App, queue: EventQueue, request: PollRequest): JsonFields | Promise<JsonFields>;
export function pollQueue(
  app: App,
  queue: EventQueue,
  { dontBlock, created, onAbort, answer }: PollRequest,
): JsonFields | Promise<JsonFields> | typeof ANSWER_PENDING {
  if (queue.size > 0 || dontBlock) {
    app.queues.release(queue);
    queue.lastConnection = Date.now();
    return new JsonFields(`"events":${queue.pendingJson()}${created ? `,"queue_id":${JSON.stringify(queue.id)}` : ''}`);
  }
  const park = (respond: (result: JsonFields) => void) => {
    const consumer = new ParkedPoll(respond);
    app.queues.attach(queue, consumer);
    onAbort?.(() => app.queues.detach(queue, consumer));
  };
  if (answer) {
    park(answer);
    return ANSWER_PENDING;
  }
  return new Promise<JsonFields>(park);
}
