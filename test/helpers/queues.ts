// Event queues as a client uses them: register for some event types, then read what arrives.
import * as assert from 'uvu/assert';
import type { TestUser } from './server.ts';

type Event = Record<string, any>;

export interface OpenQueue {
  /** The register response (the snapshot of state). */
  state: Record<string, any>;
  /** Waits for the next events (heartbeats skipped), without their ids. */
  next(): Promise<Event[]>;
  /** What is queued right now, without waiting. */
  pending(): Promise<Event[]>;
}

export async function openQueue(user: TestUser, params: Record<string, unknown>): Promise<OpenQueue> {
  const r = await user.client.post('/register', params);
  assert.is(r.status, 200, r.text);
  const queue_id = r.body.queue_id as string;
  let last = r.body.last_event_id as number;
  const fetch = async (dontBlock: boolean): Promise<Event[]> => {
    const reply = await user.client.get('/events', { queue_id, last_event_id: last, ...(dontBlock ? { dont_block: true } : {}) });
    assert.is(reply.status, 200, reply.text);
    const events = reply.body.events as Event[];
    if (events.length) last = events[events.length - 1]!.id;
    return events.filter((e) => e.type !== 'heartbeat').map(({ id: _id, ...e }) => e);
  };
  return {
    state: r.body,
    async next() {
      for (;;) {
        const events = await fetch(false);
        if (events.length) return events;
      }
    },
    pending: () => fetch(true),
  };
}
