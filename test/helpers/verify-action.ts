// Zulip's verify_action: run one action through the API and check exactly what it published —
// the list of events (by schema key, in order) and that each matches its schema in
// src/events/schemas.ts. Events leave before the response (on commit), so the reply closes the list.
import * as assert from 'uvu/assert';
import type { EventEnvelope } from '../../src/bus/bus.ts';
import { checkEvent, schemaKey } from '../../src/events/schemas.ts';
import type { Reply } from './client.ts';
import { captureEvents } from './events.ts';
import type { TestRealm } from './server.ts';

export async function verifyAction(realm: TestRealm, action: () => Promise<Reply>, expected: string[], status = 200): Promise<EventEnvelope[]> {
  const capture = captureEvents(realm.server.app, realm.id);
  let reply: Reply;
  try {
    reply = await action();
  } finally {
    capture.stop();
  }
  assert.is(reply.status, status, reply.text);
  const keys = capture.envelopes.map((e) => schemaKey(e.event));
  assert.equal(keys, expected, JSON.stringify(capture.envelopes.map((e) => e.event)));
  for (const e of capture.envelopes) {
    assert.is(checkEvent(e.event), null, JSON.stringify(e.event));
    assert.ok(e.userIds.length > 0, `${schemaKey(e.event)} addressed to nobody`);
  }
  return capture.envelopes;
}
