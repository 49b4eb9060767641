// The connection to the server's events (register, WebSocket with resume, long-poll fallback,
// re-register) is the client package's (packages/client); the web client's modules take its
// types from here.
export type { Connection, ServerEvent } from '../../packages/client/src/index.ts';
