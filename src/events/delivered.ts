// The events a client reads from its queue: each published event (schemas.ts) as
// actors/event-format.ts reshapes it for the client, with the queue's event id and the recipient's
// own parts, and the queue's heartbeats. Types only: the web client imports them, and its bundle
// takes nothing of the server.
import type { ChatEvent, EventOf, OmitEach } from './schemas.ts';

type PublishedMessage = EventOf<'message'>['message'];

/**
 * A message as a client receives it: the Markdown source left out, or in place of the HTML for a
 * client that registered with `apply_markdown: false`. (A key-remapping map rather than Omit, which
 * would drop the known fields of a type with an index signature.)
 */
export type DeliveredMessage = { [K in keyof PublishedMessage as K extends 'raw_content' | 'content_type' ? never : K]: PublishedMessage[K] } & {
  content_type: 'text/html' | 'text/x-markdown';
};

/** Published events that reach clients in another shape, replaced below by what they become. */
type Reshaped =
  | EventOf<'message'>
  | EventOf<'subscription', 'add'>
  | EventOf<'presence'>
  | EventOf<'realm_emoji'>
  | EventOf<'user_group', 'add'>
  | EventOf<'user_group', 'update'>
  | EventOf<'stream', 'create'>
  | EventOf<'stream', 'delete'>
  | EventOf<'realm_user', 'add'>;

/** A published event as shapeEvent makes it for one client, before the recipient's own parts. */
export type ShapedEvent =
  | Exclude<ChatEvent, Reshaped>
  | { type: 'message'; message: DeliveredMessage }
  // Clients without bulk_message_deletion: one event per deleted message.
  | (OmitEach<EventOf<'delete_message'>, 'message_ids'> & { message_id: number })
  // The inherited notification settings are filled in, or left null with notification_settings_null.
  | Omit<EventOf<'subscription', 'add'>, 'inherited_notification_settings'>
  // simplified_presence_events: the modern form; else the legacy per-user fields.
  | Pick<EventOf<'presence'>, 'type' | 'presences'>
  | Omit<EventOf<'presence'>, 'presences'>
  // individual_emoji_changes: the change; else the legacy full dict.
  | OmitEach<EventOf<'realm_emoji'>, 'realm_emoji'>
  | EventOf<'realm_emoji', 'update'>
  // The markers the queues read (reactivation, deactivation, archiving, an inaccessible user) leave.
  | OmitEach<EventOf<'user_group', 'add'>, 'for_reactivation'>
  | Omit<EventOf<'user_group', 'update'>, 'deactivated'>
  | Omit<EventOf<'stream', 'create'>, 'for_unarchiving'>
  | Omit<EventOf<'stream', 'delete'>, 'for_archiving'>
  | OmitEach<EventOf<'realm_user', 'add'>, 'inaccessible_user'>;

/** The recipient's own parts of a message event: its flags, and the sender's local id on the queue it was sent from. */
type MessageOwnParts = { flags: string[]; local_message_id?: string };

/** Any event as a client reads it from its queue (GET /events, the WebSocket gateway), narrowed by `type` and `op`. */
export type DeliveredEvent = { id: number } & (
  | Exclude<ShapedEvent, { type: 'message' }>
  | (Extract<ShapedEvent, { type: 'message' }> & MessageOwnParts)
  | { type: 'heartbeat' }
);
export type DeliveredType = DeliveredEvent['type'];
/** The delivered events of one type, or of one type and op: `DeliveredOf<'typing'>`, `DeliveredOf<'stream', 'update'>`. */
export type DeliveredOf<T extends DeliveredType, O extends string = never> = [O] extends [never]
  ? Extract<DeliveredEvent, { type: T }>
  : Extract<DeliveredEvent, { type: T; op: O }>;
