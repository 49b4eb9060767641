// Turns a published event into what one queue's client receives: dropped if its filter says so,
// reshaped by its capabilities (markdown or HTML, avatars, empty topic, bulk deletions, ...), with
// the recipient's own parts added by the registry, which serializes each distinct shape once.
import type { EventEnvelope } from '../src/bus/bus.ts';
import { withInheritedSettings } from '../src/domain/user-settings.ts';
import type { DeliveredMessage, ShapedEvent } from '../src/events/delivered.ts';
import type { ChatEvent, EventOf } from '../src/events/schemas.ts';
import { displayTopicFor, hasCapability, type QueueOptions } from './queue-options.ts';

type Message = EventOf<'message'>['message'];

const GRAVATAR = 'https://secure.gravatar.com/';
const DUMMY_EMAIL = /^user\d+@/;

function messageMatchesNarrow(options: QueueOptions, message: Message, flags: readonly string[]): boolean {
  for (const [operator, operand] of options.narrow) {
    const op = operand.toLowerCase();
    switch (operator) {
      case 'channel':
        if (message.type !== 'stream' || String(message.display_recipient).toLowerCase() !== op) return false;
        break;
      case 'topic':
        if (message.type !== 'stream' || String(message.subject).toLowerCase() !== op) return false;
        break;
      case 'sender':
        if (String(message.sender_email).toLowerCase() !== op && String(message.sender_id) !== op) return false;
        break;
      case 'is':
        if (!matchesIs(op, message, flags)) return false;
        break;
      case 'dm':
      case 'pm-with': {
        if (typeof message.display_recipient === 'string') return false;
        const emails = message.display_recipient.map((u) => [u.email.toLowerCase(), String(u.id)]);
        const wanted = op.split(',').map((s) => s.trim());
        if (!wanted.every((w) => emails.some((pair) => pair.includes(w)))) return false;
        break;
      }
      case 'search':
        if (
          !String(message.raw_content ?? message.content)
            .toLowerCase()
            .includes(op)
        )
          return false;
        break;
      default:
        break;
    }
  }
  return true;
}

const MENTION_FLAGS = new Set(['mentioned', 'stream_wildcard_mentioned', 'topic_wildcard_mentioned']);

function matchesIs(op: string, message: Message, flags: readonly string[]): boolean {
  switch (op) {
    case 'dm':
    case 'private':
      return message.type === 'private';
    case 'mentioned':
      return flags.some((f) => MENTION_FLAGS.has(f));
    case 'starred':
      return flags.includes('starred');
    case 'alerted':
      return flags.includes('has_alert_word');
    case 'unread':
      return !flags.includes('read');
    case 'resolved':
      return message.type === 'stream' && String(message.subject).startsWith('✔ ');
    default:
      return true;
  }
}

function messageFor(options: QueueOptions, message: Message): DeliveredMessage {
  const { raw_content: raw, ...rest } = message;
  // Every published message carries its source (queries/messages.ts); the schema leaves it undeclared.
  const source = typeof raw === 'string' ? raw : rest.content;
  const out: DeliveredMessage = options.applyMarkdown ? rest : { ...rest, content: source, content_type: 'text/x-markdown' };
  // Clients compute a gravatar themselves from a real address; a dummy one gives them nothing.
  if (options.clientGravatar && String(out.avatar_url).startsWith(GRAVATAR) && !DUMMY_EMAIL.test(String(out.sender_email))) out.avatar_url = null;
  if (out.type === 'stream') out.subject = displayTopicFor(options, String(out.subject));
  return out;
}

function wanted(options: QueueOptions, type: string): boolean {
  return options.eventTypes === null || options.eventTypes.includes(type);
}

/**
 * The shapes `event` takes for clients with `options`, before any recipient's own parts: usually
 * one, none when the client did not ask for it, several when a bulk deletion is split for an old
 * client. Alike queues share the result, so each shape is built and serialized once per fan-out.
 */
export function shapeEvent(event: ChatEvent, options: QueueOptions): ShapedEvent[] {
  if (!wanted(options, event.type)) return [];
  switch (event.type) {
    case 'message':
      return [{ ...event, message: messageFor(options, event.message) }];
    case 'delete_message': {
      if (hasCapability(options, 'bulk_message_deletion')) return [{ ...event, ...topicFields(options, event) }];
      const { message_ids: ids, ...rest } = event;
      return ids.map((message_id) => ({ ...rest, ...topicFields(options, event), message_id }));
    }
    case 'update_message':
      return [{ ...event, ...topicFields(options, event) }];
    case 'typing':
      if (event.message_type === 'stream' && !hasCapability(options, 'stream_typing_notifications')) return [];
      return [{ ...event, ...topicFields(options, event) }];
    case 'typing_edit_message': {
      const { recipient } = event;
      if (recipient.type !== 'channel') return [event];
      return [{ ...event, recipient: { ...recipient, topic: displayTopicFor(options, recipient.topic) } }];
    }
    case 'muted_topics':
      // Zulip's accepts_event: a client that asked for user_topic events gets those instead.
      return options.eventTypes?.includes('user_topic') ? [] : [event];
    case 'realm_linkifiers':
      return hasCapability(options, 'linkifier_url_template') ? [event] : [];
    case 'subscription': {
      if (event.op !== 'add') return [event];
      const { inherited_notification_settings: inherited, ...rest } = event;
      if (hasCapability(options, 'notification_settings_null') || !inherited) return [rest];
      const subs = rest.subscriptions.map((sub) => withInheritedSettings(sub, inherited));
      return [{ ...rest, subscriptions: subs }];
    }
    case 'presence': {
      // Published in both forms: `presences` (modern) and the legacy per-user fields.
      const { presences, ...legacy } = event;
      return [hasCapability(options, 'simplified_presence_events') ? { type: 'presence', presences } : legacy];
    }
    case 'realm_emoji': {
      // Published as the change (add, update_one) plus the full dict the legacy `update` carries.
      const { realm_emoji: all, ...change } = event;
      return [hasCapability(options, 'individual_emoji_changes') ? change : { type: 'realm_emoji', op: 'update', realm_emoji: all }];
    }
    case 'user_group':
      return userGroupEvents(event, hasCapability(options, 'include_deactivated_groups'));
    case 'stream':
      return streamEvents(event, hasCapability(options, 'archived_channels'));
    case 'realm_user': {
      // A new user a restricted guest cannot access, published as an "Unknown user" placeholder.
      if (!('inaccessible_user' in event)) return [event];
      const { inaccessible_user: _placeholder, ...rest } = event;
      return hasCapability(options, 'user_list_incomplete') ? [] : [rest];
    }
    default:
      return [event];
  }
}

/** The recipient's own parts of an event: per-user (message flags) and per-queue (local_message_id). */
export type OwnParts = { flags?: string[]; local_message_id?: string };

export function ownParts(envelope: EventEnvelope, userId: number, queueId: string | null): OwnParts {
  const own: OwnParts = { ...envelope.perUser?.[userId], ...(queueId === null ? undefined : envelope.perQueue?.[queueId]) };
  if (envelope.event.type === 'message' && own.flags === undefined) own.flags = [];
  return own;
}

/** Whether the queue's narrow lets this message event through, given the recipient's flags. */
export function passesNarrow(event: ChatEvent, options: QueueOptions, own: OwnParts): boolean {
  if (event.type !== 'message' || options.narrow.length === 0) return true;
  return messageMatchesNarrow(options, event.message, own.flags ?? []);
}

type TopicFields = { topic?: string; subject?: string; orig_subject?: string };

/** The topic fields an event has, as the client names the empty topic. */
function topicFields(options: QueueOptions, event: TopicFields & { type: string }): TopicFields {
  const out: TopicFields = {};
  if (event.topic !== undefined) out.topic = displayTopicFor(options, event.topic);
  if (event.subject !== undefined) out.subject = displayTopicFor(options, event.subject);
  if (event.orig_subject !== undefined) out.orig_subject = displayTopicFor(options, event.orig_subject);
  return out;
}

/**
 * Clients without `include_deactivated_groups` never see deactivated groups: they get `remove`
 * instead of the deactivation update, `add` on reactivation, and no renames of deactivated groups.
 */
function userGroupEvents(event: EventOf<'user_group'>, withDeactivated: boolean): ShapedEvent[] {
  if (event.op === 'remove') return withDeactivated ? [] : [event];
  if (event.op === 'add' && 'for_reactivation' in event) {
    const { for_reactivation: _marker, ...rest } = event;
    return withDeactivated ? [] : [rest];
  }
  if (event.op !== 'update') return [event];
  const { deactivated, ...rest } = event;
  if ('deactivated' in event.data || deactivated === true) return withDeactivated ? [rest] : [];
  return [rest];
}

/**
 * Archiving and unarchiving reach clients with `archived_channels` as the is_archived update, and
 * the others as the channel's removal or creation (Zulip's event_queue); the markers leave.
 */
function streamEvents(event: EventOf<'stream'>, withArchived: boolean): ShapedEvent[] {
  if (event.op === 'update') return event.property !== 'is_archived' || withArchived ? [event] : [];
  if (event.op === 'create') {
    const { for_unarchiving: unarchiving, ...rest } = event;
    return unarchiving && withArchived ? [] : [rest];
  }
  const { for_archiving: archiving, ...rest } = event;
  return archiving && withArchived ? [] : [rest];
}
