// The connection to the server's events (register, WebSocket with resume, long-poll fallback,
// re-register) is the client package's (packages/client); the events themselves are typed as the
// server's queues deliver them (src/events/delivered.ts, types only: nothing of the server is
// bundled), and the web client's modules take both from here.
export type { Connection } from '../../packages/client/src/index.ts';
export type { DeliveredEvent, DeliveredMessage, DeliveredOf } from '../../src/events/delivered.ts';
