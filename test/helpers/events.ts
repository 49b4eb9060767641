// Records what actions publish on the bus, for tests that check events at the bus level.
import type { App } from '../../src/app.ts';
import type { EventEnvelope } from '../../src/bus/bus.ts';

export function captureEvents(app: App, realmId: number) {
  const envelopes: EventEnvelope[] = [];
  const stop = app.bus.subscribe((e) => {
    if (e.realmId === realmId) envelopes.push(e);
  });
  return {
    envelopes,
    stop,
    /** Events of one type, each with the user ids it was addressed to. */
    ofType: (type: string) => envelopes.filter((e) => e.event.type === type),
  };
}
