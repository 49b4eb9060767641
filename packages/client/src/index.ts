// @team-chat/client: a client's event connection to the team-chat server (docs/client.md).
export { ApiError, basicAuthorization, basicCall, encodeParams, errorOf, type BasicCallOptions, type Call, type Credentials, type Params } from './api.ts';
export { connect, EventClient, type ClientOptions, type Snapshot, type Update } from './client.ts';
export { applyEvent, ChatState } from './state.ts';
export {
  EventStream,
  type Connection,
  type CreateSocket,
  type NewsOf,
  type ServerEvent,
  type SocketLike,
  type StreamEvent,
  type StreamHandlers,
  type StreamOptions,
} from './stream.ts';
